"""gunicorn settings for the image (override any of them with GUNICORN_CMD_ARGS)."""

import multiprocessing
import os

bind = f"0.0.0.0:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2 + 1))
# What gunicorn itself refuses (a request line or header over these limits, a malformed
# header) is answered as the API's JSON envelope, like every other failure.
worker_class = "receco.lib.gunicorn_workers.SyncWorker"
# The longest request line gunicorn accepts: a getReceipt batch of the most calls
# (agentapi.views.MAX_BATCH_CALLS) with the longest tokens needs about 5.8 KB.
limit_request_line = 8190
# Receipts are small; a slow client must not hold a worker for long.
timeout = 30
graceful_timeout = 30
keepalive = 5
# The request path without its query string: getReceipt inputs stay out of the log.
accesslog = "-"
access_log_format = '%(h)s "%(m)s %(U)s" %(s)s %(B)s %(M)sms'
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
# gunicorn's control socket (for gunicornc) would be made under $HOME, which the image's
# user cannot write, and several servers on one machine would share its path.
control_socket_disable = True
