"""Re-checking the whole log against the database and the published checkpoints
(``manage.py verifylog``; docs/verification.md, "Watching the log").

Every leaf's receipt (or void, or set aside) is looked up and its content rebuilt from the row as it is
now: a content that no longer hashes to what was signed is an edited receipt; a row that
is gone is a deleted one. The tree is recomputed from the leaves in order and its root
compared, at each checkpoint's size, with what the checkpoint signed and with the stored
subtree hashes proofs are served from: a leaf removed, inserted, changed or moved shows
there, as does a checkpoint rewritten or signed by no published key (a fork). Receipts,
voids and set asides older than the appender's lag that no leaf holds are reported missing
from the log, but a test receipt's, which are never logged.

A receipt deleted by retention (privacy.retention, which leaves a RemovedReceipt) is no
problem: its leaf hash still takes its place in the tree, which is checked as ever, and
the entry is counted as removed by retention; its content, gone, is not checked again.
"""

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db.models import Exists, F, OuterRef
from django.utils import timezone
from receco_verify import merkle, note
from receco_verify.canonical import canonicalize

from ledger import entries, tree
from ledger.models import Checkpoint, Head, Leaf
from receco.lib import signingkeys
from receipts.models import Receipt, RemovedReceipt, SetAside, Void

CHUNK = 5000
# Receipts younger than this are not yet expected in the log (the appender's lag and a pass).
GRACE = timedelta(minutes=2)


@dataclass
class Report:
    """What ``audit`` found: the number of entries checked and each problem, in words."""

    size: int = 0
    checkpoints: int = 0
    removed: int = 0  # entries whose receipt retention removed
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def audit(external_checkpoints: list[str] = (), using: str = "default") -> Report:
    """Check the whole log (and ``external_checkpoints``, signed notes kept elsewhere, such
    as by a witness); return the report. Needs the published keys (signing on)."""
    report = Report()
    ring = signingkeys.keyring()
    keys = ring.public if ring else {}
    head = Head.objects.using(using).filter(id=1).first()
    size = head.size if head else 0
    report.size = size

    wanted = {}
    for checkpoint in Checkpoint.objects.using(using).order_by("size"):
        wanted.setdefault(checkpoint.size, []).append(("published", checkpoint.note, bytes(checkpoint.root)))
    for text in external_checkpoints:
        try:
            parsed = note.parse_checkpoint(note.parse(text)[0])
        except note.NoteError as error:
            report.problems.append(f"a checkpoint given is malformed: {error}")
            continue
        wanted.setdefault(parsed.size, []).append(("given", text, parsed.root))
    report.checkpoints = sum(len(found) for found in wanted.values())
    for checkpoint_size, found in sorted(wanted.items()):
        for origin, text, root in found:
            _check_signature(report, origin, checkpoint_size, text, root, keys)
        if checkpoint_size > size:
            report.problems.append(
                f"the checkpoint of {checkpoint_size} entries is beyond the log's {size}: entries were removed"
            )

    stack: list[tuple[int, bytes]] = []
    expected = 0
    for leaf, receipt, void, asides, removed in _leaves(using):
        if leaf.index != expected:
            report.problems.append(
                f"entries {expected} to {leaf.index - 1} are missing from the log"
                if leaf.index > expected
                else f"entry {leaf.index} appears twice"
            )
            break
        if removed:
            report.removed += 1
        else:
            _check_entry(report, leaf, receipt, void, asides, keys)
        stack.append((0, bytes(leaf.leaf_hash)))
        while len(stack) > 1 and stack[-1][0] == stack[-2][0]:
            level, right = stack.pop()
            _, left = stack.pop()
            stack.append((level + 1, merkle.node_hash(left, right)))
        expected += 1
        _compare_roots(report, expected, stack, wanted, using)
    if expected < size:
        report.problems.append(f"entries {expected} to {size - 1} are missing from the log")
    _unlogged(report, using)
    return report


def record(report: Report, using: str = "default") -> None:
    """Keep the report's outcome on the log's head, for /readyz."""
    Head.objects.using(using).get_or_create(id=1)
    Head.objects.using(using).filter(id=1).update(
        audited_at=timezone.now(),
        audited_size=report.size,
        audit_problems=len(report.problems),
        audit_summary="\n".join(report.problems[:5]),
    )


def _leaves(using: str) -> Iterator[tuple[Leaf, Receipt | None, Void | None, list[SetAside], bool]]:
    """Each leaf in order with its receipt and void (None when gone), the receipt's set
    asides, and whether retention removed its receipt."""
    rows = Leaf.objects.using(using).order_by("index")
    last = -1
    while True:
        chunk = list(rows.filter(index__gt=last)[:CHUNK])
        if not chunk:
            return
        # A refund's entry (version 3) states its share of its sale's tax: its sale, read with it.
        receipts = (
            Receipt.objects.using(using)
            .select_related("refund_of")
            .annotate(merchant_string_id=F("merchant__string_id"))
        )
        found = receipts.in_bulk({leaf.receipt_id for leaf in chunk})
        voids = Void.objects.using(using).in_bulk({leaf.void_id for leaf in chunk if leaf.void_id})
        gone = {leaf.receipt_id for leaf in chunk if leaf.receipt_id not in found}
        removed = set(RemovedReceipt.objects.using(using).filter(receipt_id__in=gone).values_list("pk", flat=True))
        asides = entries.set_asides_of(found, using)
        for leaf in chunk:
            receipt = found.get(leaf.receipt_id)
            void = voids.get(leaf.void_id) if leaf.void_id else None
            yield leaf, receipt, void, asides.get(leaf.receipt_id, []), receipt is None and leaf.receipt_id in removed
        last = chunk[-1].index


def _check_entry(
    report: Report, leaf: Leaf, receipt: Receipt | None, void: Void | None, asides: list[SetAside], keys: dict
) -> None:
    what = f"entry {leaf.index}"
    if receipt is None:
        report.problems.append(f"{what}: receipt {leaf.receipt_id} is missing from the database (deleted)")
        return
    what = f"{what} ({leaf.kind.replace('_', ' ')} {receipt.short_code}, {receipt.token})"
    try:
        content = entries.content(leaf, receipt, receipt.merchant_string_id, asides, void)
    except LookupError as gone:
        report.problems.append(f"{what}: {gone} is missing from the database (deleted)")
        return
    canonical = canonicalize(content)
    key = keys.get(leaf.kid)
    if merkle.leaf_hash(canonical) != bytes(leaf.leaf_hash) or _digest(canonical) != bytes(leaf.content_digest):
        report.problems.append(f"{what}: edited after it was signed (its content no longer matches its signature)")
    elif key is None:
        report.problems.append(f"{what}: signed by key {leaf.kid}, which is not published")
    elif not key.verify(bytes(leaf.signature), canonical):
        report.problems.append(f"{what}: its stored signature is not valid")


def _digest(data: bytes) -> bytes:
    from hashlib import sha256

    return sha256(data).digest()


def _check_signature(report: Report, origin: str, size: int, text: str, root: bytes, keys: dict) -> None:
    try:
        verified = note.verify_checkpoint(text, keys.values(), settings.RECECO_LOG_ORIGIN)
    except note.NoteError as error:
        report.problems.append(f"the {origin} checkpoint of {size} entries is not valid: {error}")
        return
    if verified.root != root or verified.size != size:
        report.problems.append(
            f"the {origin} checkpoint of {size} entries was altered: its stored root is not the one signed"
        )


def _compare_roots(report: Report, size: int, stack: list, wanted: dict, using: str) -> None:
    if size not in wanted:
        return
    computed = merkle.range_hash([value for _, value in stack])
    for origin, _, root in wanted[size]:
        if root != computed:
            report.problems.append(
                f"the {origin} checkpoint of {size} entries does not match the log: an entry below {size} "
                "was changed, removed, added or moved (the log forked from what was published)"
            )
    try:
        stored = tree.root(size, using)
    except KeyError as error:
        report.problems.append(f"the stored tree lacks a node at size {size}: {error}")
        return
    if stored != computed:
        report.problems.append(f"the stored tree's hashes at size {size} differ from its leaves: proofs would be wrong")


def _unlogged(report: Report, using: str) -> None:
    horizon = timezone.now() - GRACE - timedelta(seconds=settings.RECECO_LOG_COMMIT_LAG)
    leaves = Leaf.objects.using(using)
    receipts = (
        Receipt.objects.using(using)
        .filter(created_at__lte=horizon, livemode=True)
        .exclude(Exists(leaves.filter(kind=Leaf.Kind.RECEIPT, receipt_id=OuterRef("id"))))
        # In the order they were written, along the primary key: the first 100 are found
        # without sorting every receipt the log lacks (the model's order, by date, would).
        .order_by("id")
        .values_list("short_code", "token")
    )
    for short_code, token in receipts[:100]:
        report.problems.append(f"receipt {short_code} ({token}) is not in the log")
    voids = (
        Void.objects.using(using)
        .filter(created_at__lte=horizon, receipt__livemode=True)
        .exclude(Exists(leaves.filter(void_id=OuterRef("id"))))
        .values_list("receipt__short_code", flat=True)
    )
    for short_code in voids[:100]:
        report.problems.append(f"the void of receipt {short_code} is not in the log")
    asides = (
        SetAside.objects.using(using)
        .filter(created_at__lte=horizon, receipt__livemode=True)
        .exclude(Exists(leaves.filter(set_aside_id=OuterRef("id"))))
        .values_list("claimed_short_code", flat=True)
    )
    for short_code in asides[:100]:
        report.problems.append(f"the set aside of receipt {short_code} is not in the log")
