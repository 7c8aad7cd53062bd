"""The client address a request counts against: the socket's, or behind trusted proxies
the one the outermost of them saw.

Behind a dual-stack bind (``-b [::]``) an IPv4 client's socket address reads
``::ffff:a.b.c.d``; such an address is the IPv4 address it carries, everywhere (limits,
budgets, allow lists, logs), never an IPv6 one (all of IPv4 would share one /64).
"""

import functools
import ipaddress

from django.conf import settings
from django.http import HttpRequest

UNKNOWN = "unknown"


def client_ip(request: HttpRequest) -> str:
    """REMOTE_ADDR, or with RECECO_TRUSTED_PROXY_COUNT = N proxies in front, the address the
    outermost of them saw (N-th from the right in X-Forwarded-For; REMOTE_ADDR when that
    is missing or not an address). IPv6 addresses count per /64, which one subscriber
    usually holds. UNKNOWN when there is no address (a Unix socket with no proxy header:
    every such caller shares one allowance)."""
    for candidate in _candidates(request):
        ip = _counted_address(candidate)
        if ip is not None:
            return ip
    return UNKNOWN


def client_address(request: HttpRequest) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The client's own address, found as ``client_ip`` finds it but whole (an IPv6
    address is not cut to its /64): for allow lists. None when there is none."""
    for candidate in _candidates(request):
        try:
            return unmapped(ipaddress.ip_address(candidate))
        except ValueError:
            continue
    return None


def unmapped(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """``ip``, or the IPv4 address it carries when it is IPv4-mapped (``::ffff:a.b.c.d``)."""
    if ip.version == 6 and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def plain_text(text: str) -> str:
    """``text`` with an IPv4-mapped address written as its IPv4 address (for logs); any
    other text unchanged."""
    try:
        return str(unmapped(ipaddress.ip_address(text)))
    except ValueError:
        return text


def _candidates(request: HttpRequest) -> list[str]:
    """The texts that may hold the client address, the one to trust first."""
    candidates = []
    hops = settings.RECECO_TRUSTED_PROXY_COUNT
    if hops:
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        forwarded = [part for part in forwarded if part]
        if len(forwarded) >= hops:
            candidates.append(forwarded[-hops])
    candidates.append(request.META.get("REMOTE_ADDR") or "")
    return candidates


@functools.lru_cache(maxsize=4096)  # the same few addresses call again and again
def _counted_address(text: str) -> str | None:
    """``text`` as the address limits count against (an IPv6 address's /64), or None."""
    try:
        ip = unmapped(ipaddress.ip_address(text))
    except ValueError:
        return None
    if ip.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False).network_address)
    return str(ip)


def with_mapped_forms(entries: list[str]) -> list[str]:
    """``entries`` (addresses, networks, "*") and, after each IPv4 one, its IPv4-mapped
    form (``::ffff:127.0.0.1``, ``::ffff:10.0.0.0/104``): an allow list for gunicorn,
    which behind a dual-stack bind sees an IPv4 proxy only in that form."""
    result = []
    for entry in entries:
        result.append(entry)
        try:
            network = ipaddress.ip_network(entry, strict=False)
        except ValueError:
            continue
        if network.version == 4:
            mapped = ipaddress.ip_address(f"::ffff:{network.network_address}")
            result.append(str(ipaddress.ip_network(f"{mapped}/{96 + network.prefixlen}")))
    return result
