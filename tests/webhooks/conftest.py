import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from webhooks import tasks
from webhooks.endpoints import create_endpoint


class Receiver:
    """A merchant's webhook receiver on localhost: keeps every request (headers and raw
    body) and answers ``status`` (or what ``answers`` holds first, one per request)."""

    def __init__(self):
        self.requests: list[dict] = []
        self.status = 200
        self.answers: list[int] = []
        self.location = ""
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status = receiver.answers.pop(0) if receiver.answers else receiver.status
                self.send_response(status)
                if receiver.location:
                    self.send_header("Location", receiver.location)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            do_GET = do_POST

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hooks"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def events(self) -> list[dict]:
        return [json.loads(request["body"]) for request in self.requests]

    def types(self) -> list[str]:
        return [event["type"] for event in self.events()]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(autouse=True)
def _local_receivers(settings):
    """The receivers of these tests listen on 127.0.0.1 over http: both allowed here."""
    settings.RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST = True
    settings.RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = True


@pytest.fixture(autouse=True)
def _no_dispatcher_pending(monkeypatch):
    """Each test starts as a new process would: no dispatcher of its own queued yet (webhooks.tasks.wake)."""
    monkeypatch.setattr(tasks, "_dispatch_runs_at", float("-inf"))


@pytest.fixture
def receiver():
    running = Receiver()
    yield running
    running.close()


@pytest.fixture
def endpoint(merchant, receiver):
    """An endpoint of ``merchant`` for every event type, at ``receiver``."""
    return create_endpoint(merchant, receiver.url, description="Accounting")


@pytest.fixture
def sent(django_capture_on_commit_callbacks):
    """Run ``change`` and the tasks it queues (the immediate backend runs them at commit)."""

    def run(change, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return change(*args, **kwargs)

    return run
