"""The log's read-only views: the published keys, the latest checkpoint, a receipt's proof
bundle, a consistency proof (docs/verification.md, "Endpoints"). Plain JSON or text, no
session, cacheable; errors as ``{"error": {"code", "message"}}``."""

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_safe

from ledger import bundles, checkpoints, proofs
from receco.lib import signingkeys
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
    """The proof bundle of the receipt ``token`` (``?entry=void``: of its void;
    ``?entry=set_aside``: of its latest set aside) against the latest checkpoint, or the
    one of ``?tree_size=N``."""
    try:
        receipt = Receipt.objects.select_related("merchant").get(token=token)
    except Receipt.DoesNotExist:
        return _error(404, "NOT_FOUND", "No receipt has this token")
    entry = request.GET.get("entry", "receipt")
    if entry not in bundles.ENTRIES:
        return _error(400, "INVALID_INPUT", "entry: must be receipt, void or set_aside")
    raw = request.GET.get("tree_size")
    size = None if raw is None else _size(raw)
    if raw is not None and size is None:
        return _error(404, "NOT_FOUND", proofs.NO_CHECKPOINT_OF_SIZE)
    try:
        found = proofs.receipt_proof(receipt, entry, size)
    except proofs.NoCheckpoint as missing:
        return _error(404, "NOT_LOGGED" if missing.size is None else "NOT_FOUND", missing.message)
    except bundles.NeverLogged as never:
        return _error(404, "NOT_FOUND", str(never))
    except bundles.NotLogged as error:
        what = entry.replace("_", " ")
        response = _error(
            404, "NOT_LOGGED", f"This {what} is not in the log's checkpoint of {error.args[0]} entries yet: try again"
        )
        response["Retry-After"] = str(proofs.wait_seconds())
        return response
    response = JsonResponse(found)
    response["Cache-Control"] = "private, max-age=60"
    return response


@require_safe
def consistency(request: HttpRequest) -> HttpResponse:
    """The consistency proof from tree size ``?from=M`` to ``?to=N`` (the latest checkpoint's
    size by default), both at most the latest checkpoint's."""
    old, raw_new = _size(request.GET.get("from")), request.GET.get("to")
    new = None if raw_new is None else _size(raw_new)
    try:
        if old is None or (raw_new is not None and new is None):
            raise proofs.BadSizes("from and to: whole numbers with 0 < from <= to")
        found = proofs.consistency(old, new)
    except proofs.NoCheckpoint as missing:
        return _error(404, "NOT_FOUND", missing.message)
    except proofs.BadSizes as error:
        return _error(400, "INVALID_INPUT", str(error))
    response = JsonResponse(found)
    response["Cache-Control"] = "public, max-age=86400"  # a proof between two sizes never changes
    response["Access-Control-Allow-Origin"] = "*"
    return response


def _size(raw: str | None) -> int | None:
    if raw is None or not raw.isascii() or not raw.isdigit() or len(raw) > 19 or int(raw) > proofs.MAX_SIZE:
        return None
    return int(raw)


def _error(status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)
