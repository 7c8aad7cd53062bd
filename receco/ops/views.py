"""The operator's endpoints: /healthz, /readyz and /metrics (receco.ops.middleware answers
them before the Host check and before any limit)."""

import hmac
import ipaddress

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from receco.lib.addresses import client_address
from receco.ops import health, metrics


def healthz(request: HttpRequest) -> HttpResponse:
    """The process answers: no database, no Redis."""
    return JsonResponse({"status": "ok"})


def readyz(request: HttpRequest) -> HttpResponse:
    """200 when the database and Redis answer and no migration is pending, else 503 with
    the reasons; either way with the details apps registered (signing on or off)."""
    problems = health.problems()
    details = health.details(database_answers="database" not in problems)
    if problems:
        reason = "; ".join(problems.values())
        return JsonResponse(
            {"status": "unavailable", "reason": reason, "problems": problems, "details": details}, status=503
        )
    return JsonResponse({"status": "ready", "details": details})


def metrics_view(request: HttpRequest) -> HttpResponse | None:
    """The metrics to an allowed address or the holder of RECECO_METRICS_TOKEN; 403 to
    anyone else; None (not here: the site's 404) when metrics are off."""
    if not settings.RECECO_METRICS:
        return None
    if not (_token_matches(request) or _address_allowed(request)):
        return JsonResponse(
            {"error": "Metrics are served only to allowed addresses or with the metrics token"}, status=403
        )
    body, content_type = metrics.exposition()
    return HttpResponse(body, content_type=content_type)


def _token_matches(request: HttpRequest) -> bool:
    token = settings.RECECO_METRICS_TOKEN
    if not token:
        return False
    given = request.META.get("HTTP_AUTHORIZATION", "")
    return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())


def _address_allowed(request: HttpRequest) -> bool:
    address = client_address(request)
    return address is not None and any(address in network for network in _allowed_networks())


def _allowed_networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(entry, strict=False) for entry in settings.RECECO_METRICS_ALLOWED_IPS]
