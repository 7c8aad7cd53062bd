"""The API's way past the site's middleware.

Calls under /api/trpc/ use none of what the pages need (static files, sessions, users,
messages, CSRF tokens, URL resolution, the browser policies of SecurityMiddleware), and
going through it all costs more than the call itself. Placed first, this answers them at
once. What the skipped middleware would still do to an API response is done here: the
Host check and Content-Length of CommonMiddleware, X-Frame-Options and
X-Content-Type-Options. (Referrer-Policy and Cross-Origin-Opener-Policy concern pages a
browser shows, and an API call is never redirected to HTTPS: a POST would be lost.)

The procedures are also answered at ``/api/<procedure>`` (see receco.lib.trpc).

Every call pays for what is here, so it is kept short: the Host header is checked once
per process for each value it takes (``checked_host``).
"""

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse

from agentapi.views import trpc
from receco.lib.trpc import procedure_path

# Hosts (as the request names them: Host, or X-Forwarded-Host when trusted) that passed
# ALLOWED_HOSTS; a few in practice, bounded against a wildcard's endless names.
_ALLOWED: set[str] = set()
MAX_HOSTS = 256


class ApiShortcutMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = procedure_path(request.path_info)
        if path is None:
            return self.get_response(request)
        checked_host(request)  # DisallowedHost becomes the 400 envelope (agentapi.handlers)
        response = trpc(request, path)
        response["Content-Length"] = str(len(response.content))
        response["X-Frame-Options"] = settings.X_FRAME_OPTIONS
        response["X-Content-Type-Options"] = "nosniff"
        return response


def checked_host(request: HttpRequest) -> None:
    """Raise DisallowedHost as ``request.get_host()`` does, remembering the hosts that passed:
    the check depends on nothing but the host and the settings."""
    raw = request._get_raw_host()
    if raw not in _ALLOWED:
        request.get_host()
        if len(_ALLOWED) >= MAX_HOSTS:
            _ALLOWED.clear()
        _ALLOWED.add(raw)


@receiver(setting_changed)
def _forget_hosts(setting, **kwargs):
    if setting in ("ALLOWED_HOSTS", "DEBUG", "USE_X_FORWARDED_HOST", "USE_X_FORWARDED_PORT"):
        _ALLOWED.clear()
