"""gunicorn settings of the benchmark, the same for the project and the bare reference.

bench/run.py names this file (gunicorn would otherwise read the image's gunicorn.conf.py
from the working directory) and adds the bind address, workers, worker class, threads
and error log. Unlike the image's settings there is no access log: the benchmark
measures the application, not the writing of log lines.
"""

timeout = 30
keepalive = 5
accesslog = None
loglevel = "warning"
# Two servers run at once (project and reference): no control socket for them to share.
control_socket_disable = True
