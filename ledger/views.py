"""The log's read-only views: the published keys, the latest checkpoint, a receipt's proof
bundle, a consistency proof (docs/verification.md, "Endpoints"). Plain JSON or text, no
session, cacheable; errors as ``{"error": {"code", "message"}}``."""

import base64

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_safe

from ledger import bundles, checkpoints, tree
from ledger.models import Checkpoint
from receco.lib import signingkeys
from receco.lib.queries import get_by
from receipts.models import Receipt

KEYS_MAX_AGE = 300
CHECKPOINT_MAX_AGE = 5


@require_safe
def jwks(request: HttpRequest) -> HttpResponse:
    """Every public key, current and retired, as a JWK Set (RFC 8037); empty when signing is off."""
    ring = signingkeys.keyring()
    response = JsonResponse(ring.jwks() if ring else {"keys": []})
    response["Cache-Control"] = f"public, max-age={KEYS_MAX_AGE}"
    response["Access-Control-Allow-Origin"] = "*"
    return response


@require_safe
def checkpoint(request: HttpRequest) -> HttpResponse:
    """The latest signed checkpoint, as text (a C2SP signed note)."""
    latest = checkpoints.latest()
    if latest is None:
        return _error(404, "NOT_FOUND", "The log has published no checkpoint yet")
    response = HttpResponse(latest.note, content_type="text/plain; charset=utf-8")
    response["Cache-Control"] = f"public, max-age={CHECKPOINT_MAX_AGE}"
    response["Access-Control-Allow-Origin"] = "*"
    return response


@require_safe
def proof(request: HttpRequest, token: str) -> HttpResponse:
    """The proof bundle of the receipt ``token`` (``?entry=void``: of its void) against the
    latest checkpoint, or the one of ``?tree_size=N``."""
    try:
        receipt = get_by(Receipt, "token", token, related=("merchant",))
    except Receipt.DoesNotExist:
        return _error(404, "NOT_FOUND", "No receipt has this token")
    entry = request.GET.get("entry", "receipt")
    if entry not in ("receipt", "void"):
        return _error(400, "INVALID_INPUT", "entry: must be receipt or void")
    against = _checkpoint(request)
    if isinstance(against, HttpResponse):
        return against
    try:
        found = bundles.bundle(receipt, against, void=entry == "void")
    except bundles.NotLogged:
        wait = settings.RECECO_LOG_COMMIT_LAG + settings.RECECO_LOG_CHECKPOINT_INTERVAL
        response = _error(
            404, "NOT_LOGGED", f"This {entry} is not in the log's checkpoint of {against.size} entries yet: try again"
        )
        response["Retry-After"] = str(wait)
        return response
    response = JsonResponse(found)
    response["Cache-Control"] = "private, max-age=60"
    return response


@require_safe
def consistency(request: HttpRequest) -> HttpResponse:
    """The consistency proof from tree size ``?from=M`` to ``?to=N`` (the latest checkpoint's
    size by default), both at most the latest checkpoint's."""
    latest = checkpoints.latest()
    if latest is None:
        return _error(404, "NOT_FOUND", "The log has published no checkpoint yet")
    old, new = _size(request.GET.get("from")), _size(request.GET.get("to", str(latest.size)))
    if old is None or new is None or not 0 < old <= new:
        return _error(400, "INVALID_INPUT", "from and to: whole numbers with 0 < from <= to")
    if new > latest.size:
        return _error(404, "NOT_FOUND", f"The latest checkpoint is of {latest.size} entries, not {new}")
    hashes = tree.consistency_proof(old, new)
    response = JsonResponse({"from": old, "to": new, "proof": [base64.b64encode(h).decode() for h in hashes]})
    response["Cache-Control"] = "public, max-age=86400"  # a proof between two sizes never changes
    response["Access-Control-Allow-Origin"] = "*"
    return response


def _checkpoint(request: HttpRequest) -> Checkpoint | HttpResponse:
    raw = request.GET.get("tree_size")
    if raw is None:
        found = checkpoints.latest_cached()
        if found is None:
            return _error(404, "NOT_LOGGED", "The log has published no checkpoint yet")
        return found
    size = _size(raw)
    found = Checkpoint.objects.filter(size=size).first() if size is not None else None
    if found is None:
        return _error(404, "NOT_FOUND", "tree_size: the log published no checkpoint of this size")
    return found


def _size(raw: str | None) -> int | None:
    if raw is None or not raw.isascii() or not raw.isdigit() or len(raw) > 19:
        return None
    return int(raw)


def _error(status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)
