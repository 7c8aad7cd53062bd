"""The receipt log (RFC 6962): its leaves, the hashes of its complete subtrees, its head,
and the checkpoints it published (docs/verification.md, "The log").

Rows here are only ever added, by one appender at a time (ledger.appender); nothing else
writes them. A leaf points at its receipt, void or set aside without a database
constraint: a row deleted behind the service's back leaves its leaf behind, for
``verifylog`` to report.
"""

from django.db import models

from receipts.signing import Identity

# A leaf's columns that keep its merchant's checked identity (Leaf.checked), named as the
# merchant's own (merchants.models.Merchant).
CHECKED_COLUMNS = ("checked_legal_name", "checked_registration_number")


class Leaf(models.Model):
    """One signed entry of the log: a receipt (sale or refund), a void, or a receipt set aside."""

    class Kind(models.TextChoices):
        RECEIPT = "receipt", "Receipt"
        VOID = "void", "Void"
        SET_ASIDE = "set_aside", "Set aside"

    index = models.BigIntegerField("leaf index", primary_key=True)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    receipt = models.ForeignKey(
        "receipts.Receipt", on_delete=models.DO_NOTHING, db_constraint=False, related_name="log_leaves"
    )
    void = models.OneToOneField(
        "receipts.Void", on_delete=models.DO_NOTHING, db_constraint=False, null=True, related_name="log_leaf"
    )
    set_aside = models.OneToOneField(
        "receipts.SetAside", on_delete=models.DO_NOTHING, db_constraint=False, null=True, related_name="log_leaf"
    )
    leaf_hash = models.BinaryField(max_length=32)
    content_digest = models.BinaryField("SHA-256 of the signed content", max_length=32)
    signature = models.BinaryField(max_length=64)
    kid = models.CharField("signing key id", max_length=43)
    # The version of the content signed (receipts.signing.CONTENT_VERSIONS), which it is
    # rebuilt in ever after. Entries appended before version 2 existed are of version 1.
    version = models.PositiveSmallIntegerField("content version", db_default=1)
    # The merchant's identity as Receco's operator had checked it when the entry was
    # appended (receipts.signing.Identity; empty: not checked): version 3 signs it, and its
    # content is rebuilt with it, whatever the merchant's record says now.
    checked_legal_name = models.CharField(max_length=200, blank=True, default="", db_default="")
    checked_registration_number = models.CharField(max_length=16, blank=True, default="", db_default="")
    appended_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # One entry per receipt and one per void: the appender's idempotence.
            models.UniqueConstraint(
                fields=["receipt"], condition=models.Q(kind="receipt"), name="ledger_leaf_one_per_receipt"
            ),
        ]

    def __str__(self) -> str:
        return f"leaf {self.index} ({self.kind} {self.receipt_id})"

    @property
    def checked(self) -> Identity:
        """The merchant's identity its content states (version 3), as it was when appended."""
        return Identity(self.checked_legal_name, self.checked_registration_number)


class Node(models.Model):
    """The hash of a complete subtree: leaves [index * 2**level, (index + 1) * 2**level).
    Its key packs both (``key``), so a proof's O(log n) nodes come in one primary-key look-up."""

    key = models.BigIntegerField(primary_key=True)
    hash = models.BinaryField(max_length=32)

    def __str__(self) -> str:
        level, index = unpack(self.key)
        return f"node {level}/{index}"


LEVELS = 64


def pack(level: int, index: int) -> int:
    """The ``Node.key`` of the subtree ``index`` at ``level``."""
    return index * LEVELS + level


def unpack(key: int) -> tuple[int, int]:
    """(level, index) of a ``Node.key``."""
    return key % LEVELS, key // LEVELS


class Head(models.Model):
    """The log's one head row: its size, and the row the appender locks so that only one
    appends at a time (``select_for_update``; on SQLite writes are serialized anyway)."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    size = models.BigIntegerField(default=0)
    # The highest receipt and void ids appended from their tables in order (the appender's
    # cursors); late commits below them are found by its sweep.
    receipt_cursor = models.BigIntegerField(default=0)
    void_cursor = models.BigIntegerField(default=0)
    set_aside_cursor = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)
    # The last `verifylog`: when, over how many entries, how many problems, the first few.
    audited_at = models.DateTimeField(null=True, blank=True)
    audited_size = models.BigIntegerField(default=0)
    audit_problems = models.IntegerField(default=0)
    audit_summary = models.TextField(blank=True)

    def __str__(self) -> str:
        return f"log head at {self.size}"


class Checkpoint(models.Model):
    """A signed checkpoint the log published: C2SP tlog-checkpoint, as a signed note."""

    size = models.BigIntegerField("tree size", unique=True)
    root = models.BinaryField(max_length=32)
    note = models.TextField("signed note")
    kid = models.CharField("signing key id", max_length=43)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-size"]
        get_latest_by = "size"

    def __str__(self) -> str:
        return f"checkpoint at {self.size}"
