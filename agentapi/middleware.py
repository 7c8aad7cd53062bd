"""The API's way past the site's middleware.

Calls under /api/trpc/ use none of what the pages need (static files, sessions, users,
messages, CSRF tokens, URL resolution, the browser policies of SecurityMiddleware), and
going through it all costs more than the call itself. Placed first, this answers them at
once. What the skipped middleware would still do to an API response is done here: the
Host check and Content-Length of CommonMiddleware, X-Frame-Options and
X-Content-Type-Options. (Referrer-Policy and Cross-Origin-Opener-Policy concern pages a
browser shows, and an API call is never redirected to HTTPS: a POST would be lost.)

The procedures are also answered at ``/api/<procedure>`` (see receco.lib.trpc).
"""

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from agentapi.views import trpc
from receco.lib.trpc import procedure_path


class ApiShortcutMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = procedure_path(request.path_info)
        if path is None:
            return self.get_response(request)
        request.get_host()  # DisallowedHost becomes the 400 envelope (agentapi.handlers)
        response = trpc(request, path)
        response["Content-Length"] = str(len(response.content))
        response["X-Frame-Options"] = settings.X_FRAME_OPTIONS
        response["X-Content-Type-Options"] = "nosniff"
        return response
