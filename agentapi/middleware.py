"""The API's way past the site's middleware.

Calls under /api/trpc/ use none of what the pages need (static files, sessions, users,
messages, CSRF tokens, URL resolution), and going through it all costs more than the
call itself. Placed right after SecurityMiddleware, this answers them at once. What the
skipped middleware would still do to an API response is done here: the Host check and
Content-Length of CommonMiddleware, and the X-Frame-Options header.
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
        if not response.has_header("X-Frame-Options"):
            response["X-Frame-Options"] = settings.X_FRAME_OPTIONS
        return response
