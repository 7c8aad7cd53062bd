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

from receco.lib import formlimits
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
        # A shared cache that is down must not lose a provider's reports: they pass.
        over = formlimits.refused(request, "callbacks", settings.RECECO_CALLBACK_RATE)
        if over is not None:
            metrics.rate_limit_refused("callbacks")
            response = HttpResponse("Too many requests\n", status=429, content_type="text/plain")
            response["Retry-After"] = str(over.retry_after)
            return response
        return view(request, *args, **kwargs)

    return csrf_exempt(wrapper)
