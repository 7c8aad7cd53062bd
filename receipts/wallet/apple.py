"""Apple Wallet: a receipt as a signed ``.pkpass``, a zip of ``pass.json``, its icons,
``manifest.json`` (the SHA-1 of every other file, as Apple's format requires) and
``signature``: a detached PKCS#7 signature of the manifest in DER, by the operator's Pass
Type ID certificate, carrying Apple's WWDR certificate that issued it and the signing
time (which Wallet requires; the builder adds it).

Signed with the ``cryptography`` package's PKCS#7 builder, in this process: no ``openssl``
command, no key in a temporary file (docs/wallet.md says why not py-pkpass).
"""

import hashlib
import html
import io
import json
import zipfile

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.serialization import pkcs7

from receipts.models import Receipt
from receipts.wallet.card import Card, card_of
from receipts.wallet.credentials import AppleWallet
from receipts.wallet.icons import icons

MEDIA_TYPE = "application/vnd.apple.pkpass"


def pkpass(receipt: Receipt, wallet: AppleWallet) -> bytes:
    """The signed .pkpass of ``receipt``."""
    files = {"pass.json": json.dumps(pass_json(card_of(receipt), wallet), ensure_ascii=False).encode(), **icons()}
    manifest = json.dumps(
        # SHA-1 because the format says so: the signature, over the manifest, is SHA-256.
        {name: hashlib.sha1(data, usedforsecurity=False).hexdigest() for name, data in files.items()},
        sort_keys=True,
    ).encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in [*files.items(), ("manifest.json", manifest), ("signature", sign(manifest, wallet))]:
            archive.writestr(name, data)
    return buffer.getvalue()


def sign(manifest: bytes, wallet: AppleWallet) -> bytes:
    """The detached PKCS#7 signature (DER) of ``manifest`` that Wallet checks."""
    return (
        pkcs7.PKCS7SignatureBuilder()
        .set_data(manifest)
        .add_signer(wallet.certificate, wallet.key, hashes.SHA256())
        .add_certificate(wallet.wwdr)
        .sign(serialization.Encoding.DER, [pkcs7.PKCS7Options.DetachedSignature, pkcs7.PKCS7Options.Binary])
    )


def pass_json(card: Card, wallet: AppleWallet) -> dict:
    """pass.json of a generic pass: the shop, the total, the date and the receipt code on
    the front with the QR code of the receipt's link; the rest on the back."""
    document = {
        "formatVersion": 1,
        "passTypeIdentifier": wallet.pass_type_id,
        "teamIdentifier": wallet.team_id,
        "serialNumber": card.pass_id,
        "organizationName": card.shop,
        "description": card.description,
        "logoText": card.shop,
        "backgroundColor": _rgb(card.background),
        "foregroundColor": _rgb(card.foreground),
        "labelColor": _rgb(card.foreground),
        "generic": {
            "headerFields": [_field("test", "Test", "Not a real sale")] if card.test else [],
            "primaryFields": [_field("total", card.total_label, card.total)],
            "secondaryFields": [_field("date", "Date", card.date)],
            "auxiliaryFields": [_field("code", "Receipt code", card.code)],
            "backFields": [
                {
                    **_field("back_link", "Your receipt", card.url),
                    "attributedValue": f'<a href="{html.escape(card.url)}">Open the receipt</a>',
                },
                # Keys are unique across the whole pass: the back's have their own prefix.
                *(_field(f"back_{field.key}", field.label, field.value) for field in card.details),
            ],
        },
        "barcodes": [
            {"format": "PKBarcodeFormatQR", "message": card.url, "messageEncoding": "iso-8859-1", "altText": card.code}
        ],
    }
    if card.voided:
        document["voided"] = True
    return document


def _field(key: str, label: str, value: str) -> dict:
    return {"key": key, "label": label, "value": value}


def _rgb(color: str) -> str:
    """``#0f766e`` as pass.json writes colours: ``rgb(15, 118, 110)``."""
    return f"rgb({int(color[1:3], 16)}, {int(color[3:5], 16)}, {int(color[5:7], 16)})"
