"""Bad configuration fails at start with a message naming the variable."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_settings(**env) -> subprocess.CompletedProcess:
    clean = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "RECECO_"))}
    clean.pop("DATABASE_URL", None)
    clean.pop("REDIS_URL", None)
    return subprocess.run(
        [sys.executable, "-c", "import receco.settings"],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_defaults_load_when_debugging():
    assert _load_settings(DJANGO_DEBUG="1").returncode == 0


def test_a_secret_key_is_required_without_debug():
    result = _load_settings(RECECO_LOCAL_CACHE="1")
    assert result.returncode == 1
    assert "DJANGO_SECRET_KEY must be set" in result.stderr


def _check(**env) -> subprocess.CompletedProcess:
    clean = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "RECECO_"))}
    for name in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"):
        clean.pop(name, None)
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**clean, "DJANGO_SECRET_KEY": "x" * 50, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_production_without_redis_stops_at_start_naming_redis_url():
    result = _check()
    assert result.returncode == 1
    assert (
        "django.core.exceptions.ImproperlyConfigured: REDIS_URL must be set (for example redis://127.0.0.1:6379/0)"
        " unless DJANGO_DEBUG is on: the rate limits and remembered keys must be shared by every worker process"
    ) in result.stderr
    assert "django_ratelimit" not in result.stderr


@pytest.mark.parametrize(
    "env",
    [{"DJANGO_DEBUG": "1"}, {"REDIS_URL": "redis://127.0.0.1:6379/0"}, {"RECECO_LOCAL_CACHE": "1"}],
    ids=["debug", "redis", "one-process"],
)
def test_the_cache_passes_the_checks_in_development_with_redis_or_when_knowingly_one_process(env):
    result = _check(**env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("System check identified no issues")


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DJANGO_DEBUG": "maybe"}, "DJANGO_DEBUG must be true or false (1/0, yes/no), not 'maybe'"),
        ({"DATABASE_URL": "mysql://root@localhost/receco"}, "DATABASE_URL must be a sqlite:// or postgres:// URL"),
        ({"DATABASE_URL": "nonsense"}, "DATABASE_URL is not a usable database URL"),
        ({"DATABASE_CONN_MAX_AGE": "ten"}, "DATABASE_CONN_MAX_AGE must be a whole number, not 'ten'"),
        ({"REDIS_URL": "localhost:6379"}, "REDIS_URL must start with redis://, rediss:// or unix://"),
        ({"RECECO_WEB_URL": "receipts.example.com"}, "RECECO_WEB_URL must be an absolute URL starting with http://"),
        ({"RECECO_MAX_BODY_BYTES": "10"}, "RECECO_MAX_BODY_BYTES must be at least 1024, not 10"),
        ({"RECECO_PHONE_REGION": "XX"}, "RECECO_PHONE_REGION must be a two-letter region code"),
        # Merchants, API keys and rate limits (issue 3)
        ({"RECECO_RATELIMIT_LIVE_KEY": "1000/minute"}, "RECECO_RATELIMIT_LIVE_KEY must be rates such as 1000/m"),
        ({"RECECO_RATELIMIT_ANONYMOUS": "0/m"}, "RECECO_RATELIMIT_ANONYMOUS must be rates such as 1000/m"),
        ({"RECECO_RATELIMIT_FAILED_LOOKUPS": ","}, "RECECO_RATELIMIT_FAILED_LOOKUPS must name at least one rate"),
        ({"RECECO_TRUSTED_PROXY_COUNT": "-1"}, "RECECO_TRUSTED_PROXY_COUNT must be at least 0, not -1"),
        # Operations (issue 15)
        ({"RECECO_LOG_FORMAT": "xml"}, "RECECO_LOG_FORMAT must be plain or json, not 'xml'"),
        ({"RECECO_METRICS": "maybe"}, "RECECO_METRICS must be true or false (1/0, yes/no), not 'maybe'"),
        (
            {"RECECO_METRICS_ALLOWED_IPS": "10.0.0.0/8,office"},
            "RECECO_METRICS_ALLOWED_IPS must list addresses or networks (10.0.0.0/8), not 'office'",
        ),
    ],
)
def test_bad_values_name_the_variable(env, message):
    result = _load_settings(DJANGO_SECRET_KEY="x" * 50, RECECO_LOCAL_CACHE="1", **env)
    assert result.returncode == 1
    assert "ImproperlyConfigured" in result.stderr
    assert message in result.stderr


def test_postgres_urls_use_persistent_checked_connections():
    code = (
        "import receco.settings as s; d = s.DATABASES['default'];"
        "print(d['ENGINE'], d['NAME'], d['CONN_MAX_AGE'], d['CONN_HEALTH_CHECKS'])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "DJANGO_DEBUG": "1", "DATABASE_URL": "postgres://app@db.internal:5432/receco"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.split() == ["receco.lib.postgresql", "receco", "600", "True"]
