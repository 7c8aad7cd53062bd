"""Where webhooks may go: the rules for an endpoint's URL and for the addresses it resolves to.

An endpoint's URL is https; http only to localhost, and only when DEBUG or
RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST allows it. Requests never go to private, loopback,
link-local or otherwise non-public addresses (this service's own network, a cloud's
metadata service) unless RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES allows it (tests,
on-premise installations). The address is checked after resolving the name, and the
request connects to the address that was checked (webhooks.client), so a name that
resolves differently the second time cannot slip through.
"""

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError

LOCALHOSTS = {"localhost", "127.0.0.1", "::1"}
HTTPS_ONLY = "Use an https:// URL (http:// only for localhost, where this service allows it)"
NO_CREDENTIALS = "A webhook URL carries no user name or password"
NOT_A_URL = "Enter an absolute https:// URL"


class AddressRefused(Exception):
    """The endpoint's name resolves to no address requests may go to."""


def validate_url(url: str) -> None:
    """Raise ValidationError if ``url`` may not be an endpoint's URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError(NOT_A_URL, code="invalid")
    if parts.username or parts.password:
        raise ValidationError(NO_CREDENTIALS, code="invalid")
    if parts.scheme == "http" and not (parts.hostname in LOCALHOSTS and http_localhost_allowed()):
        raise ValidationError(HTTPS_ONLY, code="invalid")


def http_localhost_allowed() -> bool:
    return settings.DEBUG or settings.RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST


# IPv6 addresses of the public internet are global unicast; outside it lie the deprecated
# IPv4-compatible (::a.b.c.d) and site-local (fec0::/10) forms, among others, which
# Python's is_global lets through.
_GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")
# Forms that carry an IPv4 address in their last 32 bits and reach it: NAT64 (RFC 6052)
# and IPv4-translated (::ffff:0:a.b.c.d, RFC 2765). IPv4-mapped and 6to4 have their own
# properties in ipaddress.
_CARRYING_IPV4 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("::ffff:0:0:0/96"))


def is_public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether ``ip`` is an address of the public internet (not private, loopback,
    link-local, multicast, reserved, deprecated or unspecified). An IPv6 address that
    carries an IPv4 address (mapped, NAT64, translated, 6to4) is judged by that one."""
    if isinstance(ip, ipaddress.IPv6Address):
        carried = _carried_ipv4(ip)
        if carried is not None:
            ip = carried
        elif ip not in _GLOBAL_UNICAST:
            return False
    return ip.is_global and not ip.is_multicast


def _carried_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if any(ip in network for network in _CARRYING_IPV4):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def resolve(host: str, port: int) -> list[tuple[int, str]]:
    """The (address family, address) pairs ``host`` resolves to that requests may go to.

    Raises AddressRefused when it resolves to none (every address is private and that is
    not allowed), OSError when it does not resolve. The refusal is shown to the endpoint's
    owner, so it never names the address: that would map this network's DNS for them.
    """
    allow_private = settings.RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES
    # A receiver on this very machine, where http://localhost is allowed (debug): trying
    # webhooks locally (listenwebhooks) must work with ./dev up as it is.
    allow_loopback = http_localhost_allowed()
    found = []
    for family, _, _, _, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        ip = ipaddress.ip_address(sockaddr[0])
        if allow_private or is_public(ip) or (allow_loopback and ip.is_loopback):
            found.append((family, sockaddr[0]))
    if not found:
        raise AddressRefused(
            f"{host} resolves to no public internet address: not allowed "
            "(receivers on your own network need RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES=1)"
        )
    return found
