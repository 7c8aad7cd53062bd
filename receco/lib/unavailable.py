"""Pages whose database does not answer say "back in a moment" (503 with Retry-After)
instead of failing with a 500: a stalled or restarting database is an outage to wait
out, not an error in the page. The API answers its own envelope (receco.lib.trpc)."""

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from receco.lib.trpc import DATABASE_RETRY_AFTER

logger = logging.getLogger(__name__)


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        logger.warning("Database unavailable for a page", exc_info=exception)
        # Rendered without the request: its context processors would query the database.
        response = HttpResponse(render_to_string("503.html"), status=503)
        response["Retry-After"] = str(DATABASE_RETRY_AFTER)
        return response
