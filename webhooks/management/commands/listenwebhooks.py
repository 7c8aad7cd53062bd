"""Try webhooks on your own machine, the way ``stripe listen`` does: an endpoint of the
merchant at http://127.0.0.1:<port>/hook for as long as the command runs, and each event
that arrives printed with its signature checked.

However the command ends, its endpoint goes: Ctrl-C, SIGTERM and SIGHUP set a flag that
the loop acts on (signal handlers do nothing else), and an exception removes it on its
way out. The endpoint is a listener's (``Endpoint.expires_at``), renewed while the
command runs, so that even a command killed outright (kill -9, a machine switched off)
leaves nothing live for long: the outbox sends nothing there past LISTENER_LEASE, and its
sweep removes the endpoint (webhooks.endpoints).
"""

import json
import signal
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError
from django.utils import timezone

from merchants.management.commands._lookup import merchant_named
from receipts.money import format_amount
from webhooks.endpoints import LISTENER_LEASE, create_endpoint, remove_expired, renew
from webhooks.signing import HEADER, verify

DEMO_MERCHANT = "demo-shop"
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# How long the loop waits for a request before it looks at the flag and the lease again:
# how soon a signal stops it.
POLL_SECONDS = 0.25
# How long removing the endpoint keeps trying while the service records its last event.
REMOVE_SECONDS = 10.0


class Command(BaseCommand):
    help = (
        "Listen for a merchant's webhook events on this machine and print each one with its signature "
        "checked: registers http://<host>:<port>/hook as an endpoint while it runs (Ctrl-C, SIGTERM or "
        "SIGHUP stops it and removes the endpoint; killed outright, the endpoint expires within "
        f"{int(LISTENER_LEASE.total_seconds() // 60)} minutes). "
        "Works with ./dev up, where receivers on this machine are allowed."
    )

    def add_arguments(self, parser):
        parser.add_argument("--merchant", default=DEMO_MERCHANT, help=f"the merchant's id (default: {DEMO_MERCHANT})")
        parser.add_argument("--port", type=int, default=8765, help="the port to listen on (default: 8765)")
        parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default: 127.0.0.1)")
        parser.add_argument("--events", default="", help="comma-separated event types (default: all)")
        parser.add_argument("--max-events", type=int, default=0, help="stop after this many events (default: never)")

    def handle(self, *args, merchant, port, host, events, max_events, **options):
        record = merchant_named(merchant)
        remove_expired()  # what listeners killed outright left behind, where no sweep runs
        server = _Server((host, port), _Receiver)  # one event at a time, printed in order
        url = f"http://{host}:{server.server_address[1]}/hook"
        types = [name.strip() for name in events.split(",") if name.strip()]
        endpoint = None
        # The handlers are in place before the endpoint exists: a signal from then on
        # only sets the flag, and the endpoint is removed below.
        with _Stop() as stop:
            try:
                lease = timezone.now() + LISTENER_LEASE
                try:
                    endpoint = create_endpoint(record, url, types, "listenwebhooks on this machine", expires_at=lease)
                except ValidationError as exc:
                    raise CommandError("; ".join(exc.messages)) from None
                server.secret, server.left = endpoint.secret, max_events or None
                secret = endpoint.secret
                self._say(f"Listening for {merchant}'s events at {url} (signing secret {secret}). Ctrl-C stops.")
                self._listen(server, endpoint, stop)
            finally:
                server.server_close()
                if endpoint is not None:
                    _remove(endpoint)  # the service stops sending here
                    by = f" ({stop.by})" if stop.by else ""
                    self._say(f"Stopped{by}; the endpoint {url} is removed.")

    def _say(self, line: str) -> None:
        # A line as soon as it happens, into a pipe too (listenwebhooks | tee events.log).
        self.stdout.write(line)
        self.stdout.flush()

    def _listen(self, server: "_Server", endpoint, stop: "_Stop") -> None:
        renew_at = time.monotonic() + LISTENER_LEASE.total_seconds() / 4
        while stop.by is None and (server.left is None or server.left > 0):
            server.handle_request()  # returns after POLL_SECONDS without one
            # Printed here, not in the request's handler, whose errors http.server swallows:
            # a closed output (listenwebhooks | head -1) ends the command, endpoint removed.
            while server.received:
                self._say(server.received.pop(0))
            if time.monotonic() >= renew_at:
                if not renew(endpoint):
                    self.stderr.write("The endpoint expired or was deleted meanwhile: stopping.")
                    return
                renew_at = time.monotonic() + LISTENER_LEASE.total_seconds() / 4


class _Stop:
    """SIGINT, SIGTERM and SIGHUP while it is entered: ``by`` names the signal, and nothing
    else happens until the loop sees it. Only the main thread can take signals; elsewhere
    (a test calling the command in a thread) nothing is changed."""

    def __init__(self):
        self.by: str | None = None
        self._before = {}

    def __enter__(self) -> "_Stop":
        if threading.current_thread() is threading.main_thread():
            for number in STOP_SIGNALS:
                self._before[number] = signal.signal(number, self._caught)
        return self

    def _caught(self, number, frame) -> None:
        self.by = signal.Signals(number).name

    def __exit__(self, *exc) -> None:
        for number, handler in self._before.items():
            signal.signal(number, handler)


def _remove(endpoint) -> None:
    # The service records the last event's outcome just after its answer, perhaps while
    # this deletes the endpoint's deliveries (an integrity error, or SQLite's table lock):
    # try again until it has. Should it never, the endpoint expires on its own.
    deadline = time.monotonic() + REMOVE_SECONDS
    pause = 0.05
    while True:
        try:
            endpoint.delete()
            return
        except DatabaseError:
            if time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 1.0)


class _Server(HTTPServer):
    timeout = POLL_SECONDS

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.secret, self.left, self.received = "", None, []


class _Receiver(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        signed = verify(self.server.secret, self.headers.get(HEADER, ""), body, time.time())
        self.send_response(200 if signed else 400)
        self.send_header("Content-Length", "0")
        self.end_headers()
        self.server.received.append(_describe(body, signed))
        if self.server.left is not None:
            self.server.left -= 1

    def log_message(self, format, *args):  # the events are printed, not the requests
        pass


def _describe(body: bytes, signed: bool) -> str:
    check = "signature ok" if signed else "SIGNATURE DOES NOT MATCH: answered 400"
    try:
        event = json.loads(body)
        receipt = event["data"]["object"]
        total = format_amount(receipt["total_amount"], receipt["currency"])
        what = f"{event['type']:<24} {event['id']}  receipt {receipt['short_code']}, {total} ({receipt['status']})"
    except (ValueError, KeyError, TypeError):
        what = f"not an event: {body[:80]!r}"
    return f"{time.strftime('%H:%M:%S')}  {what}  [{check}]"
