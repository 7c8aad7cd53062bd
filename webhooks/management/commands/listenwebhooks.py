"""Try webhooks on your own machine, the way ``stripe listen`` does: an endpoint of the
merchant at http://127.0.0.1:<port>/hook for as long as the command runs, and each event
that arrives printed with its signature checked."""

import json
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError

from merchants.management.commands._lookup import merchant_named
from receipts.money import format_amount
from webhooks.endpoints import create_endpoint
from webhooks.signing import HEADER, verify

DEMO_MERCHANT = "demo-shop"


class Command(BaseCommand):
    help = (
        "Listen for a merchant's webhook events on this machine and print each one with its signature "
        "checked: registers http://<host>:<port>/hook as an endpoint while it runs (Ctrl-C stops and removes it). "
        "Works with ./dev up, where receivers on this machine are allowed."
    )

    def add_arguments(self, parser):
        parser.add_argument("--merchant", default=DEMO_MERCHANT, help=f"the merchant's id (default: {DEMO_MERCHANT})")
        parser.add_argument("--port", type=int, default=8765, help="the port to listen on (default: 8765)")
        parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default: 127.0.0.1)")
        parser.add_argument("--events", default="", help="comma-separated event types (default: all)")
        parser.add_argument("--max-events", type=int, default=0, help="stop after this many events (default: never)")

    def handle(self, *args, merchant, port, host, events, max_events, **options):
        server = HTTPServer((host, port), _Receiver)  # one event at a time, printed in order
        url = f"http://{host}:{server.server_address[1]}/hook"
        types = [name.strip() for name in events.split(",") if name.strip()]
        try:
            endpoint = create_endpoint(merchant_named(merchant), url, types, "listenwebhooks on this machine")
        except ValidationError as exc:
            server.server_close()
            raise CommandError("; ".join(exc.messages)) from None
        server.secret, server.out, server.left = endpoint.secret, self.stdout, max_events or None
        self.stdout.write(
            f"Listening for {merchant}'s events at {url} (signing secret {endpoint.secret}). Ctrl-C stops.",
        )
        try:
            while server.left is None or server.left > 0:
                server.handle_request()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
            _remove(endpoint)  # the service stops sending here
            self.stdout.write(f"Stopped; the endpoint {url} is removed.")


def _remove(endpoint) -> None:
    # The service records the last event's outcome just after its answer, perhaps while
    # this deletes the endpoint's deliveries: try again a moment later.
    for _ in range(10):
        try:
            endpoint.delete()
            return
        except IntegrityError:
            time.sleep(0.2)
    endpoint.delete()


class _Receiver(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        signed = verify(self.server.secret, self.headers.get(HEADER, ""), body, time.time())
        self.send_response(200 if signed else 400)
        self.send_header("Content-Length", "0")
        self.end_headers()
        self.server.out.write(_describe(body, signed))
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
