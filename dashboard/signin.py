"""Sign-in throttling of the dashboard, by django-axes (settings: AXES_*).

After RECECO_LOGIN_FAILURE_LIMIT wrong passwords for one user name from one address,
that pair is locked out for RECECO_LOGIN_LOCKOUT_MINUTES (each further try restarts the
pause). An address whose wrong passwords, whatever the user names, reach
RECECO_LOGIN_ADDRESS_FAILURE_LIMIT within that time is locked out whole (password
spraying: one guess for each of many user names). Operators unlock at once with
``python manage.py axes_reset_username <name>`` (or ``axes_reset_ip <address>``,
``axes_reset``), or in the admin under Axes, Access attempts.
"""

import hashlib

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_cool_off, get_failure_limit
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from receco.lib.addresses import UNKNOWN, client_ip


def client_address(request: HttpRequest) -> str | None:
    """AXES_CLIENT_IP_CALLABLE: the address the API's limits count (RECECO_TRUSTED_PROXY_COUNT
    honoured), or None when there is none (a Unix socket without a proxy header)."""
    ip = client_ip(request)
    return None if ip == UNKNOWN else ip


def locked_out(request: HttpRequest, original_response: HttpResponse | None, credentials: dict | None) -> HttpResponse:
    """AXES_LOCKOUT_CALLABLE: the locked-out page, 429 with Retry-After."""
    pause = get_cool_off(request)
    response = TemplateResponse(request, "admin/locked_out.html", {"minutes": _minutes(pause)}, status=429)
    if pause is not None:
        response["Retry-After"] = str(int(pause.total_seconds()))
    return response.render()


def client_label(username: str, ip_address: str, user_agent: str, path_info: str, request: HttpRequest) -> str:
    """AXES_CLIENT_STR_CALLABLE: how axes names a client in the log: a digest, so that no
    user name or address is written there (the admin's Access attempts have them)."""
    digest = hashlib.sha256(f"{username}\0{ip_address}".encode()).hexdigest()[:12]
    return f"client {digest}"


def _minutes(pause) -> int | None:
    return None if pause is None else max(1, round(pause.total_seconds() / 60))


class SignInHandler(AxesDatabaseHandler):
    """AXES_HANDLER: axes' database handler with a second limit, per address.

    axes compares one count with one limit (AXES_FAILURE_LIMIT), and the count of a
    lockout parameter that holds the address alone is wiped by any right password from
    that address (a sprayer holding one account would reset it). So the pair (user name,
    address) stays axes' only lockout parameter, whose count a right password resets, and
    the address's count is added here, scaled so that it reaches axes' limit exactly when
    it reaches RECECO_LOGIN_ADDRESS_FAILURE_LIMIT.
    """

    def get_failures(self, request, credentials: dict | None = None) -> int:
        pair = super().get_failures(request, credentials)
        address = request.axes_ip_address
        if address is None:
            return pair
        failures = AccessAttempt.objects.filter(
            ip_address=address, attempt_time__gte=get_cool_off_threshold(request)
        ).aggregate(total=Sum("failures_since_start"))["total"]
        limit = get_failure_limit(request, credentials)
        return max(pair, (failures or 0) * limit // settings.RECECO_LOGIN_ADDRESS_FAILURE_LIMIT)
