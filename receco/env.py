"""Typed readers for settings that come from the environment.

Each reader fails at start-up with ImproperlyConfigured naming the variable, so a
typo in a deployment is caught before the first request instead of at the first use.
"""

import os
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def envstr(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def envbool(name: str, default: bool = False) -> bool:
    """Return the variable as a boolean; accepts 1/0, true/false, yes/no, on/off."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false (1/0, yes/no), not {raw!r}")


def envint(name: str, default: int, minimum: int = 0) -> int:
    """Return the variable as an integer of at least ``minimum``."""
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {raw!r}") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, not {value}")
    return value


def envlist(name: str, default: list[str]) -> list[str]:
    """Return a comma-separated variable as a list, blanks dropped."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [part.strip() for part in raw.split(",") if part.strip()]


def envurl(name: str, default: str, schemes: tuple[str, ...] = ("http", "https")) -> str:
    """Return an absolute URL without a trailing slash."""
    raw = os.environ.get(name, default).strip()
    parts = urlsplit(raw)
    if parts.scheme not in schemes or not parts.netloc:
        allowed = " or ".join(f"{s}://" for s in schemes)
        raise ImproperlyConfigured(f"{name} must be an absolute URL starting with {allowed}, not {raw!r}")
    return raw.rstrip("/")
