"""Keys, checkpoints and bundles made the way the service makes them, for the verifier's tests."""

import base64
import hashlib

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from receco_verify import merkle, note
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


def content(number: int, kid: str, version: int = 2) -> dict:
    """Receipt ``number``'s content in ``version``: from version 2 it signs its number,
    MP-2026-000001 for receipt 0."""
    item = {
        "v": version,
        "kid": kid,
        "type": "sale",
        "token": f"token-{number:04d}-abcdefgh",
        "short_code": f"K{number:05d}",
        "merchant": {"name": "Mama Put", "id": "m_1"},
        "total_amount": 1000 + number,
        "currency": "NGN",
        "items": [{"name": "Jollof", "quantity": 1, "unit_price": 1000 + number, "total_price": 1000 + number}],
    }
    if version >= 2:
        item["number"] = f"MP-2026-{number + 1:06d}"
    return item


def bundles(
    signer: Signer, count: int = 5, *, signed_by: list[Signer] | None = None, version: int = 2
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
    """The ORF receipt file ("Download for your records") carrying ``bundle``: its trust,
    its signed content and (when ``logged``) its log proof, as ledger.trust writes them."""
    item = bundle["content"]
    return {
        "orf_version": "0.1.0",
        "receipt": {"receipt_id": item["token"], "issue_timestamp": "2026-11-22T10:15:00.000Z", "receipt_type": "sale"},
        "merchant": {"legal_name": item["merchant"]["name"], "country_code": "NG"},
        "line_items": [{"description": "Jollof", "quantity": 1, "unit_price": 10.0, "line_total": 10.0}],
        "total": item["total_amount"] / 100,
        "currency": "NGN",
        "trust": {
            "hash": hashlib.sha256(canonicalize(item)).hexdigest(),
            "hash_algorithm": "SHA-256",
            "signature": bundle["signature"],
            "signed_by": item["kid"],
        },
        "extensions": {
            "receco": {
                "short_code": item["short_code"],
                "signed_content": item,
                "log": {name: bundle[name] for name in ("leaf_index", "tree_size", "inclusion", "checkpoint")}
                if logged
                else None,
            }
        },
    }


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
