"""Who may claim a token or a short code for a new receipt.

A token or short code printed on a till before the sale reaches the service (the Receco
agent keeps selling offline) is already in the customer's hands. Nobody else may take it:

- A token the agent made with its merchant's API key carries that key's public lookup id
  and a MAC under the key's token secret (merchants.keys.token_secret; the agent's
  ``tokens.py`` makes them). Any other merchant's claim of it is refused, and a MAC that
  does not match is refused too.
- A short code that begins with a digit is taken only as the code derived from the sale's
  own token (receipts.codes.derived_short_code), which is what the agent prints. Other
  requested codes are taken when free; one that is taken is replaced by a fresh code, and
  since that tells the caller the code exists, it spends the address's failed-look-up
  budget like a short code that finds nothing, and once that is spent no requested code
  is tried at all (the answer is then the same whether it exists or not).

Across live merchants nothing is ever set aside: a taken token is a conflict, a taken short
code is replaced; only a test receipt gives way to another merchant's live sale
(receipts.creation).
"""

import hmac

from merchants.models import ApiKey
from receco.errors import Conflict, InvalidInput
from receipts.codes import BASE36, SIGNED_TOKEN_RE, derived_short_code, is_derived_form

TOKEN_OF_ANOTHER_MERCHANT = "Token was issued for another merchant"
TOKEN_SIGNATURE_MISMATCH = "token: Its signature does not match the API key it names"


def token_mac(token_secret: str, body: str, lookup_id: str) -> str:
    """The 16-character MAC of a signed token (base-36 of the first 80 bits of HMAC-SHA256)."""
    digest = hmac.digest(bytes.fromhex(token_secret), f"{body}_{lookup_id}".encode(), "sha256")
    number, digits = int.from_bytes(digest[:10], "big"), []
    while number:
        number, rest = divmod(number, 36)
        digits.append(BASE36[rest])
    return "".join(reversed(digits)).rjust(16, "0")


def check_token(token: str | None, merchant_id: int | None, key: ApiKey | None = None) -> None:
    """Raise if merchant ``merchant_id`` (None: a test merchant not saved yet) may not claim
    ``token``: Conflict when it was made with another merchant's key, InvalidInput when its
    MAC does not match the key it names (or names no key). Tokens without a signature are
    anyone's to claim first. ``key``: the caller's own key, which spares a query when it is
    the one the token names."""
    match = SIGNED_TOKEN_RE.match(token or "")
    if match is None:
        return
    lookup_id = match["lookup"]
    issuer = key if key is not None and key.lookup_id == lookup_id else _key(lookup_id)
    if issuer is None:
        raise InvalidInput(TOKEN_SIGNATURE_MISMATCH)
    if merchant_id is None or issuer.merchant_id != merchant_id:
        raise Conflict(TOKEN_OF_ANOTHER_MERCHANT)
    # A key made before keys had a token secret learns it at its first request (admission).
    if issuer.token_secret and not hmac.compare_digest(
        token_mac(issuer.token_secret, match["body"], lookup_id), match["mac"]
    ):
        raise InvalidInput(TOKEN_SIGNATURE_MISMATCH)


def _key(lookup_id: str) -> ApiKey | None:
    try:
        return ApiKey.objects.get(lookup_id=lookup_id)
    except ApiKey.DoesNotExist:
        return None


def requested_short_code(code: str | None, token: str, *, may_probe: bool = True) -> str | None:
    """The requested ``code`` if it may be tried for a sale with ``token``, else None (the
    service then picks one). A code of the derived kind only when it is ``token``'s own;
    another only while the caller may still probe (``may_probe``: its failed-look-up budget
    is not spent)."""
    if not code:
        return None
    if is_derived_form(code):
        return code if code == derived_short_code(token) else None
    return code if may_probe else None
