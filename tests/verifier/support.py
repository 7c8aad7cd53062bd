"""Keys, checkpoints and bundles made the way the service makes them, for the verifier's tests."""

import base64
import hashlib

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from receco_verify import merkle, note, orf
from receco_verify.canonical import canonicalize
from receco_verify.keys import PublicKey, raw_public, thumbprint

ORIGIN = "receco.test/log"


class Signer:
    def __init__(self):
        self.private = Ed25519PrivateKey.generate()
        self.public = raw_public(self.private.public_key())
        self.kid = thumbprint(self.public)

    @property
    def key(self) -> PublicKey:
        return PublicKey(self.kid, self.public)

    def jwks(self, *others) -> dict:
        return {"keys": [self.key.jwk(), *(other.key.jwk() for other in others)]}

    def checkpoint(self, size: int, root: bytes, origin: str = ORIGIN) -> str:
        text = note.Checkpoint(origin, size, root).text()
        return note.sign(text, origin, self.private.sign, self.public)


def content(number: int, kid: str, version: int = 3) -> dict:
    """Receipt ``number``'s content in ``version``, as the service signs it: from version 2
    it signs its number, MP-2026-000001 for receipt 0; from version 3 its merchant's
    checked identity (Mama Put Foods Ltd, RC1234567)."""
    total = 1000 + number
    item = {
        "v": version,
        "kid": kid,
        "type": "sale",
        "token": f"token-{number:04d}-abcdefgh",
        "short_code": f"K{number:05d}",
        "livemode": True,
        "merchant": {"id": "m_1", "name": "Mama Put", "location": "Lekki"},
        "transaction_date": "2026-11-22T10:15:00.000Z",
        "issued_at": "2026-11-22T10:15:02.314Z",
        "currency": "NGN",
        "total_amount": total,
        "subtotal_amount": total,
        "discount_amount": None,
        "tip_amount": None,
        "items": [{"name": "Jollof", "quantity": 1, "unit_price": total, "total_price": total, "sku": "JR-1"}],
        "tax_lines": [
            {"name": "VAT", "rate": 7.5, "taxable_amount": 930 + number, "tax_amount": 70, "inclusive": True}
        ],
        "payment": {"method": "card", "card_brand": "visa", "card_last4": "4242", "authorization_code": None},
        "refund_of": None,
    }
    if version >= 2:
        item["number"] = f"MP-2026-{number + 1:06d}"
    if version >= 3:
        item["merchant"]["identity"] = {"legal_name": "Mama Put Foods Ltd", "registration_number": "RC1234567"}
    return item


def bundles(
    signer: Signer, count: int = 5, *, signed_by: list[Signer] | None = None, version: int = 3
) -> tuple[list[dict], str]:
    """``count`` signed receipts in a log, in ``version`` of the content, each with its
    inclusion proof, and the checkpoint ``signer`` signed; receipt i signed by
    ``signed_by[i]`` (``signer`` by default)."""
    signed_by = signed_by or [signer] * count
    contents = [content(i, signed_by[i].kid, version) for i in range(count)]
    leaves = [merkle.leaf_hash(canonicalize(c)) for c in contents]
    root = merkle.root_of(leaves)
    checkpoint = signer.checkpoint(count, root)
    found = []
    for index, item in enumerate(contents):
        ranges = merkle.needed_for_inclusion(index, count)
        path = [merkle.root_of(leaves[start:end]) for start, end in ranges]
        found.append(
            {
                "content": item,
                "signature": base64.b64encode(signed_by[index].private.sign(canonicalize(item))).decode(),
                "leaf_index": index,
                "tree_size": count,
                "inclusion": [base64.b64encode(h).decode() for h in path],
                "checkpoint": checkpoint,
            }
        )
    return found, checkpoint


def orf_file(bundle: dict, *, logged: bool = True) -> dict:
    """The ORF receipt file ("Download for your records") carrying ``bundle``: its fields
    as its signed content states them (receco_verify.orf.written, what the service writes
    them from) and what it does not state (the merchant's record, the status, the title),
    its trust, its signed content and (when ``logged``) its log proof, as ledger.trust
    writes them."""
    item = bundle["content"]
    stated = orf.written(item)
    document = {
        "orf_version": "0.1.0",
        **stated,
        "receipt": {**stated["receipt"], "status": "issued"},
        "merchant": {**stated["merchant"], "legal_name": "Mama Put Foods Ltd", "country_code": "NG"},
    }
    if "tax" in stated:
        document["tax"]["tax_lines"] = [{**line, "jurisdiction": "NG"} for line in stated["tax"]["tax_lines"]]
    document["trust"] = {
        "hash": hashlib.sha256(canonicalize(item)).hexdigest(),
        "hash_algorithm": "SHA-256",
        "signature": bundle["signature"],
        "signed_by": item["kid"],
    }
    document["extensions"]["receco"].update(
        status="completed",
        title="VAT receipt",
        refunds=[],
        signed_content=item,
        log={name: bundle[name] for name in ("leaf_index", "tree_size", "inclusion", "checkpoint")} if logged else None,
    )
    return document


ALPHABET = 'aZ09 "\\/\n\t\x00\x1f\x7f\u00e9\u20ac\ud7ff\ue000\uffff\U0001f600'


def random_value(rng, depth=0, alphabet=ALPHABET):
    """A random JSON value of every kind the canonical form treats apart: integers up to
    2**53, floats whole, tiny, huge and plain, strings of ``alphabet`` (escapes, characters
    beyond the BMP) and keys that sort apart by UTF-16 code unit and by code point."""
    choice = rng.randrange(9 if depth < 3 else 6)
    if choice == 0:
        return rng.choice([None, True, False])
    if choice == 1:
        return rng.randrange(-(2**53) + 1, 2**53)
    if choice == 2:
        return rng.choice(
            [7.5, 0.075, 1e-4, 123.456, 5.0, -0.5, 1e15 + 0.5, 9007199254740991.0, 0.1 + 0.2, 1e16, 1e-5, 2.5e-7]
            + [-0.0, 100.0, 1e-6, 1.5e-6, 1.5e20, 1e21, 5e-324]
        )
    if choice == 3:
        return rng.uniform(-1e6, 1e6)
    if choice in (4, 5):
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(6)))
    if choice == 6:
        return [random_value(rng, depth + 1, alphabet) for _ in range(rng.randrange(4))]
    keys = ["a", "b", "kid", "\u20ac", "\ue000", "\U0001f600", "\uffff", "", "A", "total_amount"]
    return {rng.choice(keys): random_value(rng, depth + 1, alphabet) for _ in range(rng.randrange(5))}
