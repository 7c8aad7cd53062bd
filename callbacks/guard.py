"""What every provider's callback URL gets before its view runs: they are public, so each
client address may call them RECECO_CALLBACK_RATE at most (django-ratelimit, in the
shared cache, as the customer pages count), and a body over RECECO_CALLBACK_MAX_BYTES is
refused unread (413). A provider's report is a few hundred bytes."""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django_ratelimit.core import is_ratelimited

from receco.lib import sharedcache
from receco.lib.addresses import client_ip
from receco.lib.rates import parse_rate
from receco.ops import metrics


def guarded(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """``view`` behind the callbacks' rate limit and size bound, exempt from CSRF (providers sign instead)."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return HttpResponse("Content-Length is not a number\n", status=400, content_type="text/plain")
        if length > settings.RECECO_CALLBACK_MAX_BYTES:
            return HttpResponse(
                f"Body over {settings.RECECO_CALLBACK_MAX_BYTES} bytes\n", status=413, content_type="text/plain"
            )
        if _limited(request):
            metrics.rate_limit_refused("callbacks")
            response = HttpResponse("Too many requests\n", status=429, content_type="text/plain")
            response["Retry-After"] = str(parse_rate(settings.RECECO_CALLBACK_RATE).window)
            return response
        return view(request, *args, **kwargs)

    return csrf_exempt(wrapper)


def _limited(request: HttpRequest) -> bool:
    def count() -> bool:
        ip = client_ip(request)
        rate = settings.RECECO_CALLBACK_RATE
        return is_ratelimited(request, group="callbacks", key=lambda _g, _r: ip, rate=rate, increment=True)

    # A shared cache that is down must not lose a provider's reports: they pass.
    return sharedcache.guarded("rate limiting", count, False)
