"""Typed readers for settings that come from the environment.

Each reader fails at start-up with ImproperlyConfigured naming the variable, so a
typo in a deployment is caught before the first request instead of at the first use.
"""

import os
import zoneinfo
from urllib.parse import unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

from receco.lib.rates import parse_rate

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


def envrates(name: str, default: list[str]) -> list[str]:
    """Return a comma-separated list of rates such as ``1000/m,100/s`` (receco.lib.rates)."""
    rates = envlist(name, default)
    for rate in rates:
        try:
            parse_rate(rate)
        except ValueError:
            raise ImproperlyConfigured(f"{name} must be rates such as 1000/m,100/s or 30/5m, not {rate!r}") from None
    if not rates:
        raise ImproperlyConfigured(f"{name} must name at least one rate such as 600/m")
    return rates


def envrate(name: str, default: str) -> str:
    """Return one rate such as ``30/m`` or ``10/5m`` (receco.lib.rates)."""
    rates = envrates(name, [default])
    if len(rates) != 1:
        raise ImproperlyConfigured(f"{name} must be one rate such as 30/m, not {', '.join(rates)!r}")
    return rates[0]


def envzone(name: str, default: str) -> str:
    """Return the name of a time zone of the IANA database, such as ``Africa/Lagos``."""
    value = envstr(name, default)
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ImproperlyConfigured(f"{name} must be a time zone name such as Africa/Lagos, not {value!r}") from None
    return value


_EMAIL_BACKENDS = {
    "smtp": "django.core.mail.backends.smtp.EmailBackend",
    "smtp+tls": "django.core.mail.backends.smtp.EmailBackend",
    "smtps": "django.core.mail.backends.smtp.EmailBackend",
    # Django's console backend in debug mode; outside it, a log line without the message.
    "console": "messaging.console_email.EmailBackend",
    "locmem": "django.core.mail.backends.locmem.EmailBackend",
    "dummy": "django.core.mail.backends.dummy.EmailBackend",
}
_EMAIL_DEFAULT_PORTS = {"smtp": 25, "smtp+tls": 587, "smtps": 465}


def parse_email_url(name: str, raw: str) -> dict:
    """Return Django's EMAIL_* settings for a URL such as ``smtp+tls://user:password@host:587``.

    ``smtp://`` is plain SMTP, ``smtp+tls://`` upgrades with STARTTLS, ``smtps://`` is
    TLS from the first byte; ``console:``, ``locmem:`` and ``dummy:`` pick those backends.
    User and password are percent-decoded. Raises ImproperlyConfigured naming ``name``.
    """
    parts = urlsplit(raw.strip())
    scheme = parts.scheme.lower()
    if scheme not in _EMAIL_BACKENDS:
        raise ImproperlyConfigured(
            f"{name} must start with smtp://, smtp+tls://, smtps://, console:, locmem: or dummy:, not {scheme + ':'!r}"
        )
    settings = {"EMAIL_BACKEND": _EMAIL_BACKENDS[scheme]}
    if scheme not in _EMAIL_DEFAULT_PORTS:
        return settings
    try:
        port = parts.port
    except ValueError:
        raise ImproperlyConfigured(f"{name} has a port that is not a number") from None
    if not parts.hostname:
        raise ImproperlyConfigured(f"{name} must name the SMTP host, e.g. smtp+tls://user:password@smtp.example.com")
    settings.update(
        EMAIL_HOST=parts.hostname,
        EMAIL_PORT=port or _EMAIL_DEFAULT_PORTS[scheme],
        EMAIL_HOST_USER=unquote(parts.username or ""),
        EMAIL_HOST_PASSWORD=unquote(parts.password or ""),
        EMAIL_USE_TLS=scheme == "smtp+tls",
        EMAIL_USE_SSL=scheme == "smtps",
    )
    return settings
