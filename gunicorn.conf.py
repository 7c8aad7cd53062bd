"""gunicorn settings for the image (override any of them with GUNICORN_CMD_ARGS)."""

import glob
import multiprocessing
import os
import tempfile

from receco.lib.addresses import with_mapped_forms
from receco.lib.env import envbool, envstr

bind = f"0.0.0.0:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2 + 1))
# gunicorn's own worker class. In production nginx is in front (compose.yaml, deploy/nginx):
# it reads each request whole and takes each answer whole, so a worker never waits for a
# slow client, and it refuses what can be refused at once. Without it (a laptop), a slow
# client holds a worker: docs/deployment.md, "Without the proxy".
worker_class = "sync"
# Connections the kernel holds, handshake done, until a worker accepts them (gunicorn's
# default is 2048): a crowd of clients arriving at once, a city's tills reconnecting after
# an outage, waits here rather than have its connections dropped and sent again a second
# later. The kernel caps it at net.core.somaxconn (4096 since Linux 5.4, 128 before:
# raise it on such a host, docs/deployment.md).
backlog = 4096
# The longest request line gunicorn accepts: a getReceipt batch of the most calls
# (agentapi.views.MAX_BATCH_CALLS) with the longest tokens needs about 5.8 KB.
limit_request_line = 8190
# Receipts are small: a request that takes longer than this to serve is killed.
timeout = 30
graceful_timeout = 30
keepalive = 5
# The request path without its query string (getReceipt inputs stay out of the log), and
# every access and error line without credentials (receco.ops.gunicorn_log). The request
# id (receco.ops.requestid) ties the line to the application's lines.
accesslog = "-"
logger_class = "receco.ops.gunicorn_log.GunicornLogger"
access_log_format = '%(h)s "%(m)s %(U)s" %(s)s %(B)s %(M)sms %({x-request-id}o)s'
if envstr("RECECO_LOG_FORMAT").lower() == "json":
    # gunicorn's own lines (start-up, workers, access) as JSON objects too. Its loggers
    # keep to their own handlers: gunicorn's defaults would also pass each line to the
    # root logger's handler (the application's, in a worker), which wrote it again.
    logconfig_dict = {
        "formatters": {"json": {"()": "receco.ops.logformat.JsonFormatter"}},
        "handlers": {
            "console": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stdout"},
            "error_console": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"},
        },
        "loggers": {
            "gunicorn.error": {"handlers": ["error_console"], "propagate": False},
            "gunicorn.access": {"handlers": ["console"], "propagate": False},
        },
    }
# Proxies trusted for X-Forwarded-Proto; behind a dual-stack bind (-b [::]) an IPv4 proxy
# connects as ::ffff:a.b.c.d, so each IPv4 entry counts in that form too.
forwarded_allow_ips = ",".join(
    with_mapped_forms([entry.strip() for entry in os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1").split(",")])
)
# gunicorn's control socket (for gunicornc) would be made under $HOME, which the image's
# user cannot write, and several servers on one machine would share its path.
control_socket_disable = True

# Metrics (RECECO_METRICS): every worker writes its values under PROMETHEUS_MULTIPROC_DIR
# and a scrape adds them up. The variable must be set before any worker imports
# prometheus_client; without one, a directory of this server's own is made.
if envbool("RECECO_METRICS", False) and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="receco-metrics-")


def on_starting(server):
    """Forget the values of a previous run: the counters start again from zero."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        os.makedirs(directory, exist_ok=True)
        for path in glob.glob(os.path.join(directory, "*.db")):
            os.remove(path)


def child_exit(server, worker):
    """A worker that exits keeps its counts in the sums; its live gauges go."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
