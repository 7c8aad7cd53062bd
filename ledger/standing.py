"""What the receipt page says of a receipt's place in the log: verified (its content still
is what was signed, by a published key, and a published checkpoint covers its entry),
not yet in the log, altered since it was signed, or a test receipt, which is never signed
(docs/verification.md). With it, who the signed content says issued the receipt: its
merchant's id and, from content version 3, the identity Receco's operator checked.

Cheap enough for every view of the page: one indexed look-up of its entry, the latest
checkpoint as this process read it less than a second ago, and one Ed25519 check (about
0.1 ms). The set asides of a receipt are read only when its content does not match as it
stands, which only a receipt set aside (or altered) does.
"""

from dataclasses import dataclass
from hashlib import sha256

from django.db import connections
from django.db.models import Exists, OuterRef, QuerySet
from receco_verify.canonical import canonicalize

from ledger import checkpoints, entries, proofs
from ledger.models import CHECKED_COLUMNS, Leaf
from receco.lib import signingkeys
from receipts.models import Receipt
from receipts.signing import Identity

VERIFIED = "verified"
PENDING = "pending"  # not yet in the log, or not yet under a checkpoint
ALTERED = "altered"  # its content no longer matches its signature
OFF = "off"  # signing is off and the log holds nothing of it
TEST = "test"  # a test receipt the log does not hold: test receipts are never signed


@dataclass(frozen=True)
class Standing:
    state: str
    kid: str = ""
    leaf_index: int | None = None
    tree_size: int | None = None
    wait_seconds: int = 0  # PENDING: how long a receipt usually waits to enter the log
    merchant_id: str = ""  # the merchant's id, as its content states it
    # VERIFIED: whether its content's version states the merchant's checked identity, and
    # that identity ({legal_name, registration_number}; None: nobody checked it).
    identified: bool = False
    identity: dict | None = None
    test: bool = False  # a test receipt: no purchase (one the log holds was signed before test receipts no longer were)


def standing(receipt: Receipt, using: str = "default") -> Standing:
    """Where ``receipt``'s own entry stands in the log, checked now."""
    found = _entry(receipt.pk, using)
    ring = signingkeys.keyring()
    merchant_id = receipt.merchant.string_id
    if found is None:
        if receipt.is_test:
            return Standing(TEST, merchant_id=merchant_id, test=True)
        return Standing(PENDING, wait_seconds=proofs.wait_seconds(), merchant_id=merchant_id) if ring else Standing(OFF)
    index, digest, signature, kid, version, checked = found
    latest = checkpoints.latest_cached()
    facts = {"merchant_id": merchant_id, "test": receipt.is_test}
    if latest is None or index >= latest.size:
        return Standing(PENDING, kid, index, wait_seconds=proofs.wait_seconds(), **facts)
    content = entries.receipt_entry(receipt, merchant_id, kid, version=version, checked=checked)
    canonical = canonicalize(content)
    if sha256(canonical).digest() != digest:  # a receipt set aside keeps the token it was issued with
        asides = entries.set_asides_of([receipt.pk], using).get(receipt.pk, [])
        canonical = canonicalize(entries.receipt_entry(receipt, merchant_id, kid, asides, version, checked=checked))
    key = ring.public.get(kid) if ring else None
    if sha256(canonical).digest() != digest or key is None or not key.verify(signature, canonical):
        return Standing(ALTERED, kid, index, latest.size, **facts)
    identified = "identity" in content["merchant"]
    return Standing(
        VERIFIED, kid, index, latest.size, identified=identified, identity=content["merchant"].get("identity"), **facts
    )


def _entry(receipt_id: int, using: str) -> tuple[int, bytes, bytes, str, int, Identity] | None:
    # Plain SQL, as ledger.bundles' look-up: the page's hot path.
    connection = connections[using]
    q = connection.ops.quote_name
    columns = ("index", "content_digest", "signature", "kid", "version", *CHECKED_COLUMNS)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {', '.join(map(q, columns))} FROM {q(Leaf._meta.db_table)} "  # noqa: S608
            f"WHERE {q('receipt_id')} = %s AND {q('kind')} = %s",
            [receipt_id, Leaf.Kind.RECEIPT],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    index, digest, signature, kid, version, legal_name, registration_number = row
    return index, bytes(digest), bytes(signature), kid, version, Identity(legal_name, registration_number)


def not_in_log(receipts: QuerySet) -> QuerySet:
    """Those of ``receipts`` (a Receipt queryset) that are live and that the log holds no
    entry of yet (the dashboard's Today and its filter): test receipts never are."""
    logged = Leaf.objects.filter(receipt_id=OuterRef("pk"), kind=Leaf.Kind.RECEIPT)
    return receipts.filter(livemode=True).exclude(Exists(logged))
