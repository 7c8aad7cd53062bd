"""listenwebhooks: try webhooks on this machine, as `stripe listen` does (issue 26.1)."""

import io
import threading
import time

import pytest
from django.core.management import call_command
from django.db import connection

from webhooks.models import Endpoint

pytestmark = [
    pytest.mark.django_db(transaction=True),
    # An error in the listening thread (say, removing its endpoint) fails the test.
    pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning"),
]


def _listen(out: io.StringIO, *args: str) -> threading.Thread:
    def run():
        try:
            call_command("listenwebhooks", "--port", "0", *args, stdout=out)
        finally:
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    # Until it says it listens, which it says after it registered its endpoint: waiting
    # for the endpoint alone let the test read the output before that line (seen on a
    # busy machine).
    deadline = time.monotonic() + 30
    while "Listening for" not in out.getvalue():
        assert thread.is_alive(), out.getvalue()
        assert time.monotonic() < deadline, out.getvalue()
        time.sleep(0.05)
    return thread


def test_it_registers_itself_and_prints_each_event_with_its_signature_checked(api, merchant, sale, settings):
    settings.RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST = True  # as in debug (./dev up)
    out = io.StringIO()
    thread = _listen(out, "--merchant", "mama-put", "--max-events", "1")
    endpoint = Endpoint.objects.get()
    assert endpoint.url.startswith("http://127.0.0.1:")
    assert f"Listening for mama-put's events at {endpoint.url} (signing secret {endpoint.secret})" in out.getvalue()

    assert api.post("createReceiptFromPOS", sale)[0] == 200
    thread.join(timeout=20)

    assert not thread.is_alive()
    printed = out.getvalue()
    assert "receipt.created" in printed
    assert "receipt K7P2QX, ₦1,300.00 (completed)  [signature ok]" in printed
    assert not Endpoint.objects.exists()  # removed when it stops


def test_an_unknown_merchant_is_said(settings):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="No merchant with id 'nobody'"):
        call_command("listenwebhooks", "--merchant", "nobody", "--port", "0")
