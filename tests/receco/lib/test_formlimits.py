"""Page forms are limited per client address by django-ratelimit (receco.lib.formlimits);
the API and the budgets by admission's store (merchants.admission). One limiter a kind of
count: nothing else in the service calls django-ratelimit, and the API never counts here
(docs/architecture.md)."""

import ast
import socket
from pathlib import Path

import pytest
from django.test import RequestFactory

ROOT = Path(__file__).resolve().parents[3]
SERVICE = [
    path
    for path in ROOT.glob("*/**/*.py")
    if path.relative_to(ROOT).parts[0] not in {"tests", "bench", "posagent", "verifier", ".venv", "node_modules"}
    and "migrations" not in path.parts
]


def _post(ip: str = "198.51.100.1"):
    return RequestFactory().post("/form", REMOTE_ADDR=ip)


@pytest.fixture
def formlimits():
    from receco.lib import formlimits

    return formlimits


def test_a_form_s_posts_are_counted_per_address_against_each_rate(formlimits):
    answers = [formlimits.refused(_post(), "tests.form", ["3/h", "5/d"]) for _ in range(4)]
    assert answers[:3] == [None, None, None]
    refused = answers[3]
    assert (refused.rate.text, refused.rate.limit, refused.rate.window) == ("3/h", 3, 3600)
    assert 1 <= refused.retry_after <= 3600
    # Another address, and another form, are counted apart.
    assert formlimits.refused(_post("198.51.100.2"), "tests.form", ["3/h", "5/d"]) is None
    assert formlimits.refused(_post(), "tests.other-form", "3/h") is None


def test_a_refused_post_still_counts_in_every_window(formlimits):
    for _ in range(4):
        formlimits.refused(_post(), "tests.form", ["3/h", "5/d"])
    answers = [formlimits.refused(_post(), "tests.form", ["10/h", "5/d"]) for _ in range(2)]
    assert answers[0] is None  # the 5th post of the day
    assert answers[1].rate.text == "5/d"


def test_it_fails_open_when_the_cache_is_down(formlimits, settings, caplog):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
    assert [formlimits.refused(_post(), "tests.form", "1/h") for _ in range(3)] == [None, None, None]
    assert "Shared cache unavailable during rate limiting" in caplog.text


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_only_formlimits_calls_django_ratelimit():
    calling = sorted(
        str(path.relative_to(ROOT))
        for path in SERVICE
        if any(name.split(".")[0] == "django_ratelimit" for name in _imports(path))
    )
    assert calling == ["receco/lib/formlimits.py"]


@pytest.mark.parametrize("package", ["agentapi", "merchants/admission"])
def test_the_api_and_admission_never_count_in_it(package):
    users = [
        str(path.relative_to(ROOT))
        for path in SERVICE
        if str(path.relative_to(ROOT)).startswith(package + "/") and "receco.lib.formlimits" in _imports(path)
    ]
    assert users == []
