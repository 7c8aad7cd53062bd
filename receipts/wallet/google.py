"""Google Wallet: a receipt as a save link, ``https://pay.google.com/gp/v/save/<jwt>``,
whose JWT (RS256, signed with the operator's service account key, by PyJWT) holds a
generic pass object and the generic class it belongs to. Google creates both when the
customer saves the pass: the service calls no Google API.

The whole pass travels in the link, and a link past about 2,000 characters is cut short by
some browsers and by many mail and chat apps: so the object holds the front of the pass and
a few short lines, not the items (the link to the receipt has the rest), the claims are
UTF-8, not escaped (a ``₦`` costs 3 bytes, not 6), a long shop name or line is
shortened, and lines are left out, the least wanted first, until the link fits.
"""

import json
from datetime import datetime

import jwt
from django.utils import timezone

from receipts.models import Receipt
from receipts.wallet.card import Card, Field, card_of
from receipts.wallet.credentials import GoogleWallet

SAVE_URL = "https://pay.google.com/gp/v/save/"
# The class of every receipt pass: "<issuer id>.receco_receipt".
CLASS_SUFFIX = "receco_receipt"
LANGUAGE = "en-US"
# The lines of the back of the pass a save link carries, most wanted first: when the
# link would be longer than LINK_LENGTH, the last are left out.
_DETAILS = ("issued", "void", "test", "refund_of")
LINK_LENGTH = 2000
# A shop's name (up to 200 characters) is cut to this many on the pass, where Google shows
# about 30; each line of the back to TEXT_LENGTH.
TITLE_LENGTH = 40
TEXT_LENGTH = 80


def save_url(receipt: Receipt, wallet: GoogleWallet, *, now: datetime | None = None) -> str:
    """The link that adds ``receipt`` to the customer's Google Wallet."""
    return SAVE_URL + save_jwt(card_of(receipt), wallet, now=now)


def save_jwt(card: Card, wallet: GoogleWallet, *, now: datetime | None = None) -> str:
    """The signed JWT of a save link: typ savetowallet, for the audience google."""
    lines = sorted((field for field in card.details if field.key in _DETAILS), key=lambda f: _DETAILS.index(f.key))
    issued = now or timezone.now()
    while True:
        token = _signed(_claims(card, lines, wallet, issued), wallet)
        if len(SAVE_URL) + len(token) <= LINK_LENGTH or not lines:
            return token
        lines.pop()


def generic_object(card: Card, lines: list[Field], wallet: GoogleWallet) -> dict:
    """The generic pass object: the shop as its title, the total as its header, the QR
    code of the receipt's link, ``lines`` and a link to the receipt."""
    return {
        "id": f"{wallet.issuer_id}.{card.pass_id}",
        "classId": f"{wallet.issuer_id}.{CLASS_SUFFIX}",
        # A voided sale's pass is kept, greyed out, as Apple's "voided" pass is.
        "state": "INACTIVE" if card.voided else "ACTIVE",
        "cardTitle": _text(_shortened(card.shop, TITLE_LENGTH)),
        "subheader": _text(card.total_label),
        "header": _text(card.total),
        "hexBackgroundColor": card.background,
        "barcode": {"type": "QR_CODE", "value": card.url, "alternateText": card.code},
        "textModulesData": [
            {"id": field.key, "header": field.label, "body": _shortened(field.value, TEXT_LENGTH)} for field in lines
        ],
        "linksModuleData": {"uris": [{"id": "receipt", "uri": card.url, "description": "Open the receipt"}]},
    }


def _claims(card: Card, lines: list[Field], wallet: GoogleWallet, now: datetime) -> dict:
    return {
        "iss": wallet.service_account,
        "aud": "google",
        "typ": "savetowallet",
        "iat": int(now.timestamp()),
        "origins": list(wallet.origins),
        "payload": {
            "genericClasses": [{"id": f"{wallet.issuer_id}.{CLASS_SUFFIX}"}],
            "genericObjects": [generic_object(card, lines, wallet)],
        },
    }


def _signed(claims: dict, wallet: GoogleWallet) -> str:
    body = json.dumps(claims, ensure_ascii=False, separators=(",", ":")).encode()
    # The key id tells Google which of the service account's keys signed it.
    return jwt.api_jws.encode(body, wallet.key, algorithm="RS256", headers={"kid": wallet.key_id})


def _shortened(text: str, length: int) -> str:
    return text if len(text) <= length else text[: length - 1].rstrip() + "…"


def _text(value: str) -> dict:
    return {"defaultValue": {"language": LANGUAGE, "value": value}}
