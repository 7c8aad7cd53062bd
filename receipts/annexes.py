"""What other apps show beside a receipt, outside its signed content: the receipts app's
one interface for them (receipts imports none of the apps above it).

An app registers a provider in its ``AppConfig.ready()``: a function of a receipt that
answers an Annex, or None when it has nothing to show for it. E-invoicing's is the
receipt's e-invoice once the tax authority stamped it: its IRN and the NRS QR code.
Every place a receipt is shown to its customer asks ``of(receipt)``: the receipt page and
its print view, the email, and the ORF document, which carries each annex under its own
extension (``extensions.<name>``), beside ``extensions.receco`` and never inside what
Receco signed: an annex is added after the sale, not signed over after the fact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from receco.lib import qr

if TYPE_CHECKING:
    from receipts.models import Receipt


@dataclass(frozen=True)
class Annex:
    """One thing shown beside a receipt: a reference with its QR code."""

    name: str  # its ORF extension's name, and its element's class on the pages ("nrs")
    label: str  # what the reference is, e.g. "NRS e-invoice (IRN)"
    reference: str  # e.g. the IRN
    caption: str  # the words under its QR code
    qr_payload: str  # what its QR code encodes
    qr_title: str  # its QR code's accessible name
    extension: dict  # what the ORF document carries under ``extensions[name]``

    def png(self) -> bytes:
        return qr.qr_png(self.qr_payload)

    def svg(self) -> str:
        return qr.qr_svg(self.qr_payload, title=self.qr_title)


Provider = Callable[["Receipt"], Annex | None]
_providers: list[Provider] = []


def register(provider: Provider) -> None:
    """Add ``provider``, once (an app's ready() may run twice in tests)."""
    if provider not in _providers:
        _providers.append(provider)


def of(receipt: Receipt) -> list[Annex]:
    """What is shown beside ``receipt``, in the order the providers registered."""
    return [annex for provider in _providers if (annex := provider(receipt)) is not None]
