"""The log configuration: plain lines for people (development), or one JSON object a line
for a log collector (RECECO_LOG_FORMAT=json). Every line carries the request id
(receco.ops.requestid) and no credential (receco.ops.redaction): one handler writes
every line of the application and of the task worker, Django's included.

Neither format writes a record's extra attributes: libraries attach objects to records
(django.request attaches the request, whose text holds its path and so a receipt's token).
"""

from pythonjsonlogger.json import JsonFormatter as _LibraryJsonFormatter

FORMATS = ("plain", "json")
# The fields of a JSON line, and the only ones.
JSON_FIELDS = ("time", "level", "logger", "request_id", "message", "exc_info", "stack_info")


class JsonFormatter(_LibraryJsonFormatter):
    """python-json-logger's formatter, writing JSON_FIELDS only."""

    def __init__(self, **kwargs):
        super().__init__(
            "%(levelname)s %(name)s %(request_id)s %(message)s",
            rename_fields={"levelname": "level", "name": "logger"},
            timestamp="time",
            **kwargs,
        )

    def add_fields(self, log_record, record, message_dict) -> None:
        super().add_fields(log_record, record, message_dict)
        for field in [field for field in log_record if field not in JSON_FIELDS]:
            del log_record[field]
        if log_record.get("request_id") is None:  # a record no RequestIdFilter saw (gunicorn's)
            log_record["request_id"] = "-"


def logging_config(log_format: str, level: str) -> dict:
    """settings.LOGGING for ``log_format`` (one of FORMATS) at ``level`` for the root logger."""
    formatters = {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
        "json": {"()": JsonFormatter},
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {
            "request_id": {"()": "receco.ops.requestid.RequestIdFilter"},
            "redact": {"()": "receco.ops.redaction.RedactFilter"},
        },
        "formatters": {log_format: formatters[log_format]},
        "handlers": {
            "console": {"class": "logging.StreamHandler", "formatter": log_format, "filters": ["request_id", "redact"]}
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            # Django warns of every 4xx answer: noise, one line for each page not found.
            "django.request": {"level": "ERROR"},
            # Django's own handlers of these (its DEFAULT_LOGGING: the console in debug mode,
            # runserver's request lines) write bare lines past the filters above; without
            # them, their records reach the root logger's handler like every other.
            "django": {"handlers": []},
            "django.server": {"handlers": [], "propagate": True},
        },
    }
