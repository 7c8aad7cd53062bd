"""Content-Security-Policy for the customer pages.

Everything the pages load comes from this site: scripts only from our static files
(no inline script at all), styles from our static files plus one ``<style>`` element
per page carrying the merchant's colour, allowed by a per-request nonce; images from
here, ``data:`` and the origin of the receipt's logo.
"""

import secrets
from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, HttpResponse


def csp(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Give the request a ``csp_nonce`` and ``csp_img_origins`` (a list a view may add
    http(s) origins to) and send the policy with the response."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        request.csp_nonce = secrets.token_urlsafe(16)
        request.csp_img_origins = []
        response = view(request, *args, **kwargs)
        response.headers.setdefault("Content-Security-Policy", policy(request.csp_nonce, request.csp_img_origins))
        response.headers.setdefault("Permissions-Policy", "camera=(self), microphone=(), geolocation=()")
        return response

    return wrapper


def policy(nonce: str, img_origins: list[str]) -> str:
    """The policy text: ``default-src 'self'`` and the exceptions described above."""
    images = " ".join(["'self'", "data:", *img_origins])
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            f"style-src 'self' 'nonce-{nonce}'",
            f"img-src {images}",
            # The camera preview plays a MediaStream.
            "media-src 'self' blob: mediastream:",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )
