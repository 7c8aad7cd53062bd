"""/api/openapi.json (the document) and /api/reference/ (the page made from it)."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from agentapi.openapi.document import TITLE, document, document_json
from agentapi.openapi.reference import failures, introduction, operations
from receco.lib.csp import csp
from receco.lib.trpc import API_PREFIX

# The document changes only with a deployment.
_CACHE_CONTROL = "public, max-age=300"


@require_safe
def openapi_json(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(document_json(), content_type="application/json")
    response["Cache-Control"] = _CACHE_CONTROL
    response["Access-Control-Allow-Origin"] = "*"  # for API tools that read it from another origin
    return response


@require_safe
@csp
def reference(request: HttpRequest) -> HttpResponse:
    base_url = settings.RECECO_WEB_URL.rstrip("/")
    context = {
        "title": TITLE,
        "version": document()["info"]["version"],
        "base_url": f"{base_url}{API_PREFIX.rstrip('/')}",
        "operations": operations(base_url),
        "introduction": introduction(),
        "errors": failures(),
    }
    response = render(request, "agentapi/reference.html", context)
    response["Cache-Control"] = _CACHE_CONTROL
    return response
