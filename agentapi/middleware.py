"""The API's way past the site's middleware.

Calls under /api/trpc/ use none of what the pages need (static files, sessions, users,
messages, CSRF tokens, URL resolution, the browser policies of SecurityMiddleware), and
going through it all costs more than the call itself. Placed first, this answers them at
once. What the skipped middleware would still do to an API response is done here: the
Host check and Content-Length of CommonMiddleware, X-Frame-Options and
X-Content-Type-Options. (Referrer-Policy and Cross-Origin-Opener-Policy concern pages a
browser shows, and an API call is never redirected to HTTPS: a POST would be lost.)
"""

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from agentapi.views import API_PREFIX, trpc


class ApiShortcutMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path_info
        if not path.startswith(API_PREFIX):
            if path != API_PREFIX[:-1]:
                return self.get_response(request)
            path = API_PREFIX  # /api/trpc, no procedure named: the envelope, not a redirect
        request.get_host()  # DisallowedHost becomes the 400 envelope (agentapi.handlers)
        response = trpc(request, path[len(API_PREFIX) :])
        if not response.has_header("Content-Length"):
            response["Content-Length"] = str(len(response.content))
        response["X-Frame-Options"] = settings.X_FRAME_OPTIONS
        response["X-Content-Type-Options"] = "nosniff"
        return response
