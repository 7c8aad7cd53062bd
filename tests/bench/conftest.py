"""What the tests of the bare reference (bench/reference.py) and of Django's floor
(bench/floor) share: the reference's WSGI function on the test database, and one call
of it."""

import threading
from io import BytesIO

import pytest
from django.db import connection

from bench import reference


@pytest.fixture
def reference_app(monkeypatch):
    """The bare reference's WSGI function, on the test database, with a connection of its
    own (closed afterwards)."""
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    monkeypatch.setattr(reference, "_DATABASE_URL", url)
    monkeypatch.setattr(reference, "_local", threading.local())
    yield reference.application
    opened = getattr(reference._local, "connection", None)
    if opened is not None:
        opened.close()


def call(app, method: str, path: str, query: str = "", body: bytes = b"") -> tuple[str, bytes]:
    """The status line and the body a WSGI function answers a request."""
    answer = {}
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": BytesIO(body),
    }
    content = b"".join(app(environ, lambda status, headers: answer.update(status=status)))
    return answer["status"], content
