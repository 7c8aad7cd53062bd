"""The operator's middleware, placed first in settings.MIDDLEWARE.

OperationsMiddleware answers /healthz, /readyz and /metrics itself: load balancers probe
by address, so the Host header is not checked, and no limit applies. Every other request
gets its id (receco.ops.requestid): X-Request-ID when sane, else a new one, set for its
log lines and returned in the X-Request-ID header.

MetricsMiddleware, next, is in the list only when RECECO_METRICS is on: off, metrics
cost a request nothing.
"""

import time

from django.http import HttpRequest, HttpResponse

from receco.lib.trpc import procedure_label
from receco.ops import metrics, requestid, views

ENDPOINTS = {"/healthz": views.healthz, "/readyz": views.readyz, "/metrics": views.metrics_view}


class OperationsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        endpoint = ENDPOINTS.get(request.path_info)
        if endpoint is not None and (response := endpoint(request)) is not None:
            return response
        request_id, token = requestid.begin(request.META.get(requestid.META_KEY))
        try:
            response = self.get_response(request)
        finally:
            requestid.end(token)
        response[requestid.HEADER] = request_id  # sane, or made here
        return response


class MetricsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        metrics.request_done(procedure_of(request), response.status_code, time.perf_counter() - started)
        return response


def procedure_of(request: HttpRequest) -> str:
    """The label a request is counted under: the procedure called ("batch" for several,
    "unknown" for a name not registered), else the name of the page's view ("other" for
    what no view answered, static files included)."""
    label = procedure_label(request.path_info)
    if label is not None:
        return label
    match = request.resolver_match
    return match.view_name if match is not None else "other"
