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


def is_public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether ``ip`` is an address of the public internet (not private, loopback,
    link-local, multicast, reserved or unspecified; IPv4 mapped into IPv6 judged as IPv4)."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def resolve(host: str, port: int) -> list[tuple[int, str]]:
    """The (address family, address) pairs ``host`` resolves to that requests may go to.

    Raises AddressRefused when it resolves to none (every address is private and that is
    not allowed), OSError when it does not resolve.
    """
    allow_private = settings.RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES
    found, refused = [], []
    for family, _, _, _, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        address = sockaddr[0]
        if allow_private or is_public(ipaddress.ip_address(address)):
            found.append((family, address))
        else:
            refused.append(address)
    if not found:
        raise AddressRefused(f"{host} resolves to a private address ({', '.join(refused)}): not allowed")
    return found
