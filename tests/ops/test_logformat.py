"""The log formats: RECECO_LOG_FORMAT's plain lines and JSON objects (receco.ops.logformat)."""

import json
import logging
import sys

from django.test import RequestFactory

from receco.ops import requestid
from receco.ops.logformat import JsonFormatter, logging_config


def _record(message="delivery %s queued", args=(7,), **extra) -> logging.LogRecord:
    record = logging.LogRecord("messaging.customers", logging.INFO, __file__, 1, message, args, None)
    record.__dict__.update(extra)
    requestid.RequestIdFilter().filter(record)
    return record


def test_a_json_line_holds_the_fields_it_names():
    with requestid.restored("till-7-sale-42"):
        line = JsonFormatter().format(_record())
    entry = json.loads(line)
    assert set(entry) == {"time", "level", "logger", "request_id", "message"}
    assert entry["level"] == "INFO"
    assert entry["logger"] == "messaging.customers"
    assert entry["request_id"] == "till-7-sale-42"
    assert entry["message"] == "delivery 7 queued"
    assert "\n" not in line


def test_extra_attributes_are_left_out():
    request = RequestFactory().get("/app/receipt/rcpt_secret01_aaaaaa")
    line = JsonFormatter().format(_record(request=request, status_code=404, customer="ada@example.com"))
    assert "rcpt_secret01_aaaaaa" not in line
    assert "ada@example.com" not in line


def test_a_traceback_stays_on_one_line():
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    requestid.RequestIdFilter().filter(record)
    line = JsonFormatter().format(record)
    assert "\n" not in line
    assert "ValueError: boom" in json.loads(line)["exc_info"]


def test_outside_a_request_the_id_is_a_dash():
    assert json.loads(JsonFormatter().format(_record()))["request_id"] == "-"


def test_plain_lines_carry_the_id_too():
    config = logging_config("plain", "INFO")
    formatter = logging.Formatter(config["formatters"]["plain"]["format"])
    with requestid.restored("till-7-sale-42"):
        assert "INFO messaging.customers [till-7-sale-42] delivery 7 queued" in formatter.format(_record())
