"""gunicorn settings for the image (override any of them with GUNICORN_CMD_ARGS)."""

import multiprocessing
import os

bind = f"0.0.0.0:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2 + 1))
# Receipts are small; a slow client must not hold a worker for long.
timeout = 30
graceful_timeout = 30
keepalive = 5
# The request path without its query string: getReceipt inputs stay out of the log.
accesslog = "-"
access_log_format = '%(h)s "%(m)s %(U)s" %(s)s %(B)s %(M)sms'
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
