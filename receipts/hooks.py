"""What other apps add to a change of a receipt: the receipts app's one interface for them.

Receipts imports none of the apps above it. They register a Hook in their
``AppConfig.ready()`` (webhooks records an event for the merchant's endpoints, messaging
the deliveries of the receipt to a contact the customer gave), and the writer
(receipts.writer), which makes every change to a receipt row, runs them:

- for each change it asks every hook, in the order they registered, whether it
  ``wants`` it (without a query where it can: every sale asks);
- in the change's transaction each hook that wants it ``write``s its rows, and what it
  returns is kept under its ``name`` in ``Written.outcomes``; a hook that raises undoes
  the whole change (messaging's daily limits refuse a contact that way);
- a sale no hook wants skips the transaction: on PostgreSQL it is one statement (its
  number's upsert and its INSERT);
- once the change has committed, each hook ``told`` of its kind hears of it
  (``committed``), whether it wanted the change or not: a hook that adds no rows (the
  log's, which wakes its appender) costs a sale nothing more than that call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from django.db import transaction

if TYPE_CHECKING:
    from merchants.models import Merchant
    from receipts.models import Receipt

# The changes hooks hear of, by kind.
CREATED = "created"  # a sale was stored: ``receipt``
CONTACT_UPDATED = "contact_updated"  # a customer's contact was stored on ``receipt``
REFUNDED = "refunded"  # ``receipt`` is a new refund of ``sale``, whose status and details now say so
VOIDED = "voided"  # ``receipt``, a sale, was cancelled
SET_ASIDE = "set_aside"  # ``receipt`` gave its token and short code up to another sale (told once committed only)


@dataclass(frozen=True)
class Change:
    """One change the writer makes to a receipt row, as hooks see it.

    ``receipt`` is the receipt as it is after the change, saved; but a sale's hooks are
    asked whether they want it (``wants``) before it is stored: its id and number unset.
    ``merchant`` is its merchant when the caller holds that object (a hook may keep what
    it learns about the merchant on it), else None. ``email`` and ``phone`` are the
    customer's contact this change gives the receipt (a sale's, a contact update's, the
    sale's for its refund), to be sent the receipt."""

    kind: str
    receipt: Receipt
    merchant: Merchant | None = None
    keyed: bool = False  # made with the merchant's API key
    sale: Receipt | None = None  # REFUNDED: the sale refunded
    email: str | None = None
    phone: str | None = None

    @property
    def owner(self) -> Merchant:
        """The receipt's merchant: the one the caller holds, or read with the receipt."""
        return self.merchant if self.merchant is not None else self.receipt.merchant


class Hook:
    """What an app adds to changes of receipts. Override what applies."""

    name = ""  # its outcome's key in Written.outcomes
    told: frozenset[str] = frozenset()  # the kinds of change ``committed`` hears of

    def wants(self, change: Change) -> bool:
        """Whether this hook adds anything to ``change`` (a sale asks every hook: no query if possible)."""
        return False

    def write(self, change: Change) -> object:
        """Add this hook's rows, inside the change's transaction; return its outcome.
        Raising undoes the change."""
        return None

    def committed(self, change: Change) -> None:
        """Called once ``change``, of a kind in ``told``, has committed, whether this hook
        wanted it or not (a wake-up of a worker, never a row): keep it cheap."""


@dataclass(frozen=True)
class Written:
    """What a change came to: the receipt it wrote, and each hook's outcome by its name."""

    receipt: Receipt
    outcomes: dict[str, object] = field(default_factory=dict)


_HOOKS: list[Hook] = []
# The registered hooks told of some changes once committed: most are not, and a sale asks.
_TOLD: list[Hook] = []


def register(hook: Hook) -> None:
    """Run ``hook`` for every change from now on (an app's ``ready()``); one of the same
    name registered before is replaced."""
    _HOOKS[:] = [known for known in _HOOKS if known.name != hook.name]
    _HOOKS.append(hook)
    _TOLD[:] = [known for known in _HOOKS if known.told]


def unregister(name: str) -> None:
    """Run the hook named ``name`` no more (a test's, once it ends)."""
    _HOOKS[:] = [known for known in _HOOKS if known.name != name]
    _TOLD[:] = [known for known in _HOOKS if known.told]


def wanting(change: Change) -> list[Hook]:
    """The registered hooks that want ``change``, in the order they registered."""
    return [hook for hook in _HOOKS if hook.wants(change)]


def write(hooks: list[Hook], change: Change) -> dict[str, object]:
    """Run each of ``hooks``' ``write`` for ``change`` (in its transaction); their outcomes by name."""
    return {hook.name: hook.write(change) for hook in hooks}


def committed(change: Change, using: str = "default") -> None:
    """Tell every hook ``told`` of ``change``'s kind of it once the transaction in progress
    on ``using`` commits (at once when none is: a lone INSERT, the one statement). Nothing,
    if it rolls back; a hook that raises then is logged and the others are told all the same."""
    for hook in _TOLD:
        if change.kind in hook.told:
            transaction.on_commit(partial(hook.committed, change), using=using, robust=True)
