"""django-ratelimit's cache check is handled deliberately, not silenced everywhere: the
local-memory cache is an error outside development, Redis passes."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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


def test_local_memory_rate_limits_are_an_error_in_production():
    result = _check()
    assert result.returncode == 1
    assert "django_ratelimit.E003" in result.stderr
    assert "is not a shared cache" in result.stderr


def test_local_memory_is_fine_for_development():
    result = _check(DJANGO_DEBUG="1")
    assert result.returncode == 0, result.stderr
    assert "django_ratelimit" not in result.stdout + result.stderr


def test_redis_passes_the_check():
    result = _check(REDIS_URL="redis://127.0.0.1:6379/0")
    assert result.returncode == 0, result.stderr
    assert "django_ratelimit" not in result.stdout + result.stderr
