"""What each entry of the log signs, rebuilt from the rows as they are now: a receipt (a
sale or a refund), a void, a receipt set aside (receipts.signing says what each holds).

Each entry is rebuilt in the version of the content it was signed in (``Leaf.version``):
an entry of version 1 stays one, without the receipt's number that version 2 signs. An
entry of version 3 states its merchant's identity as it was when appended, which its
leaf keeps (``Leaf.checked``), and a refund's share of its sale's tax lines and card.

A receipt set aside keeps, in its entry, the token and short code it was issued with,
which its SetAside rows remember; each set aside is an entry of its own, from the pair
it took to the next. So a set aside is never an edit to ``verifylog``, and changing a
receipt's token or short code behind the service's back still is one.
"""

from collections import defaultdict
from collections.abc import Iterable

from ledger.models import Leaf
from receipts.models import Receipt, SetAside, Void
from receipts.signing import (
    CONTENT_VERSION,
    UNCHECKED,
    ContentRow,
    Identity,
    identities,
    receipt_content,
    set_aside_content,
    void_content,
)


def set_asides_of(receipt_ids: Iterable[int], using: str = "default") -> dict[int, list[SetAside]]:
    """The SetAside rows of the receipts ``receipt_ids``, by receipt, in one query (a range
    of the receipts' index: there are few set asides, and a batch's ids are close)."""
    wanted = set(receipt_ids)
    if not wanted:
        return {}
    found = defaultdict(list)
    rows = SetAside.objects.using(using).filter(receipt_id__gte=min(wanted), receipt_id__lte=max(wanted))
    for set_aside in rows.order_by("id"):
        if set_aside.receipt_id in wanted:
            found[set_aside.receipt_id].append(set_aside)
    return found


def receipt_entry(
    receipt: Receipt | ContentRow,
    merchant_id: str,
    kid: str,
    set_asides: list[SetAside] = (),
    version: int = CONTENT_VERSION,
    *,
    checked: Identity = UNCHECKED,
    sale: Receipt | None = None,
) -> dict:
    """What the entry of ``receipt`` (with its ``set_asides``) signs with the key ``kid``,
    in ``version`` of the content, its merchant ``checked`` as it states it (version 3;
    ``sale``: a refund's, receipts.signing.receipt_content)."""
    identity = identities(receipt, set_asides)[0] if set_asides else None
    return receipt_content(receipt, merchant_id, kid, identity, version, checked=checked, sale=sale)


def void_entry(
    void: Void,
    receipt: Receipt,
    merchant_id: str,
    kid: str,
    set_asides: list[SetAside] = (),
    version: int = CONTENT_VERSION,
    *,
    checked: Identity = UNCHECKED,
) -> dict:
    """What the entry of ``void``, of ``receipt``, signs with the key ``kid``, in ``version``."""
    identity = identities(receipt, set_asides)[0] if set_asides else None
    return void_content(void, receipt, merchant_id, kid, identity, version, checked=checked)


def set_aside_entry(
    set_aside: SetAside,
    receipt: Receipt,
    merchant_id: str,
    kid: str,
    set_asides: list[SetAside],
    version: int = CONTENT_VERSION,
    *,
    checked: Identity = UNCHECKED,
) -> dict:
    """What the entry of ``set_aside``, one of ``receipt``'s ``set_asides``, signs, in ``version``."""
    ordered = sorted(set_asides, key=lambda sa: sa.pk)
    place = next(number for number, known in enumerate(ordered) if known.pk == set_aside.pk)
    pairs = identities(receipt, ordered)
    return set_aside_content(
        set_aside, receipt, merchant_id, kid, pairs[place], pairs[place + 1], version, checked=checked
    )


def content(
    leaf: Leaf,
    receipt: Receipt,
    merchant_id: str,
    set_asides: list[SetAside] = (),
    void: Void | None = None,
) -> dict:
    """What ``leaf`` signs, rebuilt from its rows now in the version it was signed in
    (``void``: its Void, for a void's leaf).

    Raises LookupError when the row the leaf names is gone.
    """
    checked = leaf.checked
    if leaf.kind == Leaf.Kind.VOID:
        if void is None:
            raise LookupError(f"void {leaf.void_id}")
        return void_entry(void, receipt, merchant_id, leaf.kid, set_asides, leaf.version, checked=checked)
    if leaf.kind == Leaf.Kind.SET_ASIDE:
        own = next((sa for sa in set_asides if sa.pk == leaf.set_aside_id), None)
        if own is None:
            raise LookupError(f"set aside {leaf.set_aside_id}")
        return set_aside_entry(own, receipt, merchant_id, leaf.kid, set_asides, leaf.version, checked=checked)
    return receipt_entry(receipt, merchant_id, leaf.kid, set_asides, leaf.version, checked=checked)
