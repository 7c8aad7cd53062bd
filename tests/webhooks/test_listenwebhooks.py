"""listenwebhooks: try webhooks on this machine, as `stripe listen` does (issue 26.1); and
however it ends, its endpoint goes (issue 32.10): stopped by SIGTERM it stayed registered
and enabled, and a shop's signed events went to whatever listened on that port later.

The signals are real, sent to the command running as its own process on the suite's
database. Every wait is for a condition (a line printed, the process gone), bounded only
to fail rather than hang.
"""

import io
import os
import select
import signal
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime, timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from messaging.outbox import sweep
from tests.servers import forget_cache_prefix, start_command
from webhooks import endpoints
from webhooks.endpoints import LISTENER_LEASE, create_endpoint
from webhooks.management.commands import listenwebhooks
from webhooks.models import Delivery, Endpoint

pytestmark = [
    pytest.mark.django_db(transaction=True),
    # An error in the listening thread (say, removing its endpoint) fails the test.
    pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning"),
]

WAIT = 60  # seconds: the bound of every wait for a condition, far beyond what it takes


def _until(condition, what: str):
    deadline = time.monotonic() + WAIT
    while not (result := condition()):
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.02)
    return result


# --- In this process: what it prints ---------------------------------------------------


def _listen(out: io.StringIO, *args: str) -> threading.Thread:
    """The command in a thread; returns once it says it listens (its endpoint is made)."""

    def run():
        try:
            call_command("listenwebhooks", "--port", "0", *args, stdout=out)
        finally:
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    _until(lambda: "Listening for" in out.getvalue() or not thread.is_alive(), "the listening line")
    assert "Listening for" in out.getvalue(), out.getvalue()
    return thread


def test_it_registers_itself_and_prints_each_event_with_its_signature_checked(api, merchant, sale, settings):
    settings.RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST = True  # as in debug (./dev up)
    out = io.StringIO()
    thread = _listen(out, "--merchant", "mama-put", "--max-events", "1")
    endpoint = Endpoint.objects.get()
    assert endpoint.url.startswith("http://127.0.0.1:")
    assert f"Listening for mama-put's events at {endpoint.url} (signing secret {endpoint.secret})" in out.getvalue()

    assert api.post("createReceiptFromPOS", sale)[0] == 200
    thread.join(timeout=WAIT)

    assert not thread.is_alive()
    printed = out.getvalue()
    assert "receipt.created" in printed
    assert "receipt K7P2QX, ₦1,300.00 (completed)  [signature ok]" in printed
    assert printed.endswith(f"Stopped; the endpoint {endpoint.url} is removed.\n")
    assert not Endpoint.objects.exists()  # removed when it stops


def test_its_endpoint_is_a_listeners_and_expires_unless_renewed(merchant, settings, monkeypatch):
    settings.RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST = True
    # A short lease, renewed every quarter of it: the renewal is seen within the test.
    monkeypatch.setattr(endpoints, "LISTENER_LEASE", timedelta(seconds=2))
    monkeypatch.setattr(listenwebhooks, "LISTENER_LEASE", timedelta(seconds=2))
    out = io.StringIO()
    before = timezone.now()
    thread = _listen(out, "--merchant", "mama-put", "--max-events", "1")
    endpoint = Endpoint.objects.get()
    assert before + timedelta(seconds=2) <= endpoint.expires_at <= timezone.now() + timedelta(seconds=2)
    first = endpoint.expires_at
    _until(lambda: Endpoint.objects.get().expires_at > first, "the lease renewed")

    _post(endpoint.url)  # the one event it waits for, unsigned
    thread.join(timeout=WAIT)
    assert not thread.is_alive()
    assert "not an event: b'{}'  [SIGNATURE DOES NOT MATCH: answered 400]" in out.getvalue()
    assert not Endpoint.objects.exists()


def test_a_listener_removes_what_listeners_killed_outright_left(merchant, receiver, settings):
    """Where no sweep runs (./dev up), the next listener tidies away the expired endpoints."""
    left = create_endpoint(merchant, receiver.url, expires_at=timezone.now() - timedelta(seconds=1))
    out = io.StringIO()
    thread = _listen(out, "--merchant", "mama-put", "--max-events", "1")
    assert not Endpoint.objects.filter(pk=left.pk).exists()
    _post(Endpoint.objects.get().url)
    thread.join(timeout=WAIT)
    assert not thread.is_alive()


def test_an_unknown_merchant_is_said(settings):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="No merchant with id 'nobody'"):
        call_command("listenwebhooks", "--merchant", "nobody", "--port", "0")


# --- An expired listener's endpoint: nothing sent, then removed --------------------------


def test_nothing_is_sent_to_an_expired_listeners_endpoint_and_the_sweep_removes_it(api, merchant, sale, receiver):
    """What kill -9 leaves: the outbox honours the expiry, and its sweep removes the endpoint."""
    past = timezone.now() - timedelta(seconds=1)
    expired = create_endpoint(merchant, receiver.url, description="listenwebhooks on this machine", expires_at=past)
    kept = create_endpoint(merchant, receiver.url + "/kept", description="Accounting")
    assert api.post("createReceiptFromPOS", sale)[0] == 200
    assert [request["path"] for request in receiver.requests] == ["/hooks/kept"]
    assert not Delivery.objects.to_endpoint(expired).exists()  # dropped, not retried
    assert Delivery.objects.to_endpoint(kept).get().status == "sent"

    sweep()
    assert list(Endpoint.objects.all()) == [kept]


def test_a_listeners_endpoint_within_its_lease_gets_its_events(api, merchant, sale, receiver):
    create_endpoint(merchant, receiver.url, expires_at=timezone.now() + LISTENER_LEASE)
    assert api.post("createReceiptFromPOS", sale)[0] == 200
    assert receiver.types() == ["receipt.created"]
    sweep()
    assert Endpoint.objects.count() == 1


def test_renewing_pushes_the_expiry_back_but_not_for_one_expired(merchant, receiver):
    now = timezone.now()
    live = create_endpoint(merchant, receiver.url, expires_at=now + timedelta(seconds=30))
    dead = create_endpoint(merchant, receiver.url, expires_at=now - timedelta(seconds=1))
    assert endpoints.renew(live, now=now) is True
    assert Endpoint.objects.get(pk=live.pk).expires_at == now + LISTENER_LEASE
    assert endpoints.renew(dead, now=now) is False
    assert Endpoint.objects.get(pk=dead.pk).expires_at == now - timedelta(seconds=1)


# --- Its own process, real signals ------------------------------------------------------


class Shared:
    """The suite's database, which the command's process opens too (on SQLite a file:
    tests/conftest.py), and what of it the command's endpoint is."""

    def __init__(self):
        db = connection.settings_dict
        if connection.vendor == "postgresql":
            self.url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
        else:
            self.url = f"sqlite:///{db['NAME']}"

    def endpoints(self) -> list[tuple[str, datetime | None]]:
        """(url, expires_at) of each endpoint, as committed."""
        return list(Endpoint.objects.order_by("pk").values_list("url", "expires_at"))


@pytest.fixture
def shared(merchant) -> Shared:
    yield Shared()
    forget_cache_prefix()  # what the command's processes kept in the suite's Redis


class Listener:
    """``manage.py listenwebhooks`` in a process of its own."""

    def __init__(self, shared: Shared, errors):
        self.errors = errors
        self.process = start_command(
            shared.url,
            "listenwebhooks", "--merchant", "mama-put", "--port", "0",
            stderr=errors,
            RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST="1",
        )  # fmt: skip
        self.output = b""
        self.read_until(b"Ctrl-C stops.\n")
        self.url = self.output.split(b" events at ")[1].split(b" ")[0].decode()

    def read_until(self, text: bytes) -> None:
        """Read its output until ``text`` has come (or it ended)."""
        deadline = time.monotonic() + WAIT
        while text not in self.output:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no {text!r} in {self.output!r}; errors: {self.errors.read_text()}"
            if select.select([self.process.stdout], [], [], remaining)[0]:
                chunk = os.read(self.process.stdout.fileno(), 65536)
                assert chunk, f"it ended without {text!r}: {self.output!r}; errors: {self.errors.read_text()}"
                self.output += chunk

    def wait(self) -> int:
        try:
            return self.process.wait(timeout=WAIT)
        except BaseException:
            self.process.kill()
            self.process.wait()
            raise


@pytest.fixture
def listener(shared, tmp_path):
    made = []

    def start() -> Listener:
        made.append(Listener(shared, tmp_path / f"errors-{len(made)}.txt"))
        return made[-1]

    yield start
    for one in made:
        if one.process.poll() is None:
            one.process.kill()
            one.process.wait()
        if one.process.stdout and not one.process.stdout.closed:
            one.process.stdout.close()


def _post(url: str) -> int:
    request = urllib.request.Request(url, b"{}", {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as answer:
            return answer.status
    except urllib.error.HTTPError as answer:
        return answer.code


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_every_signal_that_stops_it_removes_its_endpoint(listener, shared, stop):
    """The review's finding: SIGTERM (a service manager, `kill`, docker stop) and SIGHUP
    (its terminal closed) left the endpoint registered and enabled; Ctrl-C removed it."""
    running = listener()
    ((url, expires_at),) = shared.endpoints()
    assert url == running.url
    assert timezone.now() < expires_at <= timezone.now() + LISTENER_LEASE

    running.process.send_signal(stop)
    ended = running.wait()
    assert shared.endpoints() == []
    assert ended == 0, running.errors.read_text()
    running.read_until(b"is removed.\n")
    assert running.output.endswith(f"Stopped ({stop.name}); the endpoint {url} is removed.\n".encode())


def test_an_exception_removes_its_endpoint(listener, shared):
    """Its output closed (`listenwebhooks | head -1`): the next event's line cannot be
    written. The command ends with the error, and its endpoint goes with it."""
    running = listener()
    running.process.stdout.close()
    assert _post(running.url) == 400  # unsigned: printed as such, into the closed pipe
    assert running.wait() == 1
    assert "BrokenPipeError" in running.errors.read_text()
    assert shared.endpoints() == []


def test_killed_outright_its_endpoint_expires_within_the_lease(listener, shared):
    running = listener()
    running.process.send_signal(signal.SIGKILL)
    assert running.wait() == -signal.SIGKILL
    ((url, expires_at),) = shared.endpoints()  # nothing could remove it ...
    assert url == running.url
    assert expires_at <= timezone.now() + LISTENER_LEASE  # ... but it does not live for ever
