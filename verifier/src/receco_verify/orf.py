"""A receipt file in the Open Receipt Format, as "Download for your records" saves it: its
``trust`` (``hash``: SHA-256 hex of the canonical signed content, ``hash_algorithm``
``SHA-256``, ``signature``: Ed25519 in base64, ``signed_by``: the key's id) and, under
``extensions.receco``, the ``signed_content`` and, once the receipt is in the log, the
``log`` proof (``leaf_index``, ``tree_size``, ``inclusion``, ``checkpoint``).

``bundle_of`` turns such a file into the proof bundle ``receipt.verify_bundle`` checks;
``check_trust`` checks that its trust fields describe the content they come with;
``check_fields`` that every field of the file the signed content states (the totals, the
items, the tax lines, the dates, the merchant, the numbers...) says what it says, for
the signature covers the signed content, not the fields an accountant or a spreadsheet
reads. ``reading`` says what those fields are; the service writes its files from it.
"""

import hashlib
import json

from receco_verify import money
from receco_verify.canonical import CanonicalFormError, canonicalize
from receco_verify.receipt import IDENTIFIED_FROM, NUMBERED_FROM, VerificationError

EXTENSION = "receco"
HASH_ALGORITHM = "SHA-256"
LOG_FIELDS = ("leaf_index", "tree_size", "inclusion", "checkpoint")


class NotInLog(VerificationError):
    """The file is signed, but carries no proof of the receipt's place in the log yet."""


def is_orf(document) -> bool:
    """Whether ``document`` is an ORF file (rather than a proof bundle)."""
    return isinstance(document, dict) and "orf_version" in document


def signed_part(document) -> tuple[dict, dict, dict | None]:
    """(trust, signed content, log proof or None) of an ORF receipt file, as it states them.

    Raises VerificationError when the file carries no signature or a malformed proof.
    """
    trust = document.get("trust")
    extension = (document.get("extensions") or {}).get(EXTENSION)
    if not isinstance(trust, dict) or not isinstance(extension, dict) or "signed_content" not in extension:
        raise VerificationError("the file carries no signature (no trust and extensions.receco.signed_content)")
    content = extension["signed_content"]
    if not isinstance(content, dict):
        raise VerificationError("the file's signed content is not an object")
    log = extension.get("log")
    if log is not None and (not isinstance(log, dict) or any(name not in log for name in LOG_FIELDS)):
        raise VerificationError(f"the file's log proof has the fields {', '.join(LOG_FIELDS)}")
    return trust, content, log


def check_trust(document) -> None:
    """Check that the file's trust fields describe its signed content: ``hash`` is its
    SHA-256, ``signed_by`` the key it names. (The signature itself is checked with the
    content, by ``receipt.verify_signature``.)

    Raises VerificationError when they do not.
    """
    trust, content, _ = signed_part(document)
    if trust.get("hash_algorithm") != HASH_ALGORITHM:
        raise VerificationError(f"trust.hash_algorithm is {trust.get('hash_algorithm')!r}, not {HASH_ALGORITHM!r}")
    try:
        digest = hashlib.sha256(canonicalize(content)).hexdigest()
    except CanonicalFormError as error:
        raise VerificationError(f"the content has no canonical form: {error}") from None
    if trust.get("hash") != digest:
        raise VerificationError("trust.hash is not the SHA-256 of the signed content: the file was changed")
    if trust.get("signed_by") != content.get("kid"):
        raise VerificationError("trust.signed_by is not the key the signed content names (kid)")


def bundle_of(document) -> dict:
    """The proof bundle an ORF receipt file carries.

    Raises NotInLog when it carries no log proof yet, VerificationError when it carries
    no signature or a malformed proof (``signed_part``).
    """
    trust, content, log = signed_part(document)
    if log is None:
        raise NotInLog("the file carries no proof of the receipt's place in the log yet")
    return {"content": content, "signature": trust.get("signature"), **{name: log[name] for name in LOG_FIELDS}}


class _Absent:
    """A field the file must not have (``ABSENT``): the signed content states there is none."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()
RECEIPT_TYPES = ("sale", "refund")


def reading(content: dict) -> dict:
    """What an ORF receipt file states of a sale's or refund's signed ``content``: the part
    of the document the content says, each field as the file must hold it (amounts in
    major units, tax rates as fractions), ``ABSENT`` where the file must hold none (no tax
    lines, no card). Left out, as the content does not state them: the merchant's record
    as it is now (legal name, country, tax identifiers), the receipt's status and title,
    the refunds of a sale, its link; a refund's tax lines and card before version 3 (they
    are its sale's share, signed from version 3 on); the number before version 2.

    Raises KeyError or TypeError for a content that is not a sale's or refund's of a known
    version (a void's, a set aside's: no receipt file carries one).
    """
    if content["type"] not in RECEIPT_TYPES:
        raise KeyError(f"a {content['type']!r} is not a receipt")
    currency = content["currency"]
    refund = content["type"] == "refund"
    payment = content["payment"]

    def major(minor):
        return money.major(minor, currency)

    extension = {
        "token": content["token"],
        "short_code": content["short_code"],
        "livemode": content["livemode"],
        "subtotal": major(content["subtotal_amount"]),
        "discount": major(content["discount_amount"]),
        "tip": major(content["tip_amount"]),
        "refund_of": content["refund_of"]["token"] if refund else None,
    }
    if content["v"] >= NUMBERED_FROM:
        extension["receipt_number"] = content["number"]
    if refund:
        extension["refunded_items"] = [
            {"index": line["index"], "quantity": line["quantity"]} for line in content["refund_of"]["lines"]
        ]
    document = {
        "receipt": {
            "receipt_id": content["token"],
            "issue_timestamp": content["transaction_date"],
            "receipt_type": content["type"],
        },
        "merchant": {"merchant_id": content["merchant"]["id"], "display_name": content["merchant"]["name"]},
        "line_items": [
            {
                "line_item_id": item.get("sku") or str(position),
                "description": item["name"],
                "quantity": item["quantity"],
                "unit_price": major(item["unit_price"]),
                "line_total": major(item["total_price"]),
            }
            for position, item in enumerate(content["items"], start=1)
        ],
        "total": major(content["total_amount"]),
        "currency": currency,
        "extensions": {EXTENSION: extension},
    }
    if refund and content["v"] < IDENTIFIED_FROM:
        # Its tax lines and card are its sale's share, which this version does not sign.
        if payment["method"]:
            document["payment"] = {"payment_method": payment["method"]}
        return document
    lines = content["tax_lines"]
    document["tax"] = _tax(lines, major) if lines else ABSENT
    extension["tax_lines_inclusive"] = [bool(line["inclusive"]) for line in lines]
    extension["card_last4"] = payment["card_last4"]
    paid = {
        "payment_method": payment["method"],
        "provider": payment["card_brand"],
        "authorization_code": payment["authorization_code"],
    }
    document["payment"] = {name: value or ABSENT for name, value in paid.items()} if any(paid.values()) else ABSENT
    return document


def _tax(lines: list[dict], major) -> dict:
    names = {line["name"] for line in lines}
    return {
        "tax_scheme": names.pop() if len(names) == 1 else ABSENT,
        "tax_lines": [
            {
                "rate": round(line["rate"] / 100, 6),
                "base_amount": major(line["taxable_amount"]),
                "tax_amount": major(line["tax_amount"]),
            }
            for line in lines
        ],
    }


def written(content: dict) -> dict:
    """The part of a receipt file ``content`` writes: its ``reading`` without the fields
    the file must not have. Raises as ``reading`` does."""
    return _without_absent(reading(content))


def _without_absent(value):
    if isinstance(value, dict):
        return {name: _without_absent(item) for name, item in value.items() if item is not ABSENT}
    if isinstance(value, list):
        return [_without_absent(item) for item in value]
    return value


def check_fields(document) -> None:
    """Check that every field of the receipt file that its signed content states says what
    the content says (``reading``).

    Raises VerificationError naming the first field that does not, or when the signed
    content is not a receipt's.
    """
    _, content, _ = signed_part(document)
    try:
        expected = reading(content)
    except (KeyError, TypeError, AttributeError):
        raise VerificationError("the signed content is not a sale's or a refund's: it is no receipt's") from None
    _agree(expected, document, "")


def _agree(expected, found, path: str) -> None:
    if isinstance(expected, dict):
        if not isinstance(found, dict):
            raise VerificationError(f"the file's {path} is not an object: the file was changed after it was signed")
        for name, value in expected.items():
            where = f"{path}.{name}" if path else name
            if value is ABSENT:
                if name in found:
                    raise VerificationError(
                        f"the file has {where}, which the signed content has none of: "
                        "the file was changed after it was signed"
                    )
            elif name not in found:
                raise VerificationError(
                    f"the file has no {where}, the signed content says {_shown(value)}: "
                    "the file was changed after it was signed"
                )
            else:
                _agree(value, found[name], where)
    elif isinstance(expected, list):
        if not isinstance(found, list) or len(found) != len(expected):
            count = len(found) if isinstance(found, list) else "no"
            raise VerificationError(
                f"the file's {path} has {count} entries, the signed content {len(expected)}: "
                "the file was changed after it was signed"
            )
        for index, (value, item) in enumerate(zip(expected, found, strict=True)):
            _agree(value, item, f"{path}[{index}]")
    elif not _same(expected, found):
        raise VerificationError(
            f"the file's {path} is {_shown(found)}, the signed content says {_shown(expected)}: "
            "the file was changed after it was signed"
        )


def _same(expected, found) -> bool:
    """Equal as JSON values: numbers by value (1300 is 1300.0), anything else by type and value."""
    numbers = (int, float)
    if isinstance(expected, numbers) and isinstance(found, numbers):
        if isinstance(expected, bool) or isinstance(found, bool):
            return type(expected) is type(found) and expected == found
        return expected == found
    return type(expected) is type(found) and expected == found


def _shown(value) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)
