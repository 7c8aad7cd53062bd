"""Error pages for requests that fail before the router runs (a bad Host header, an
exception in middleware): under the API's paths they still answer the JSON envelope."""

from django.views import defaults

from agentapi.views import respond_error
from receco.lib.trpc import ProcedureError, procedure_path


def _api_or(default_view, code: str, message: str):
    def view(request, exception=None):
        path = procedure_path(request.path_info)
        if path is not None:
            return respond_error(ProcedureError(code, message), path or None)
        if exception is None:
            return default_view(request)
        return default_view(request, exception)

    return view


bad_request = _api_or(defaults.bad_request, "INVALID_INPUT", "Bad request")
permission_denied = _api_or(defaults.permission_denied, "FORBIDDEN", "Forbidden")
page_not_found = _api_or(defaults.page_not_found, "NOT_FOUND", "Not found")
server_error = _api_or(defaults.server_error, "INTERNAL_SERVER_ERROR", "Internal server error")
