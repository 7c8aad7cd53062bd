"""NRS's code lists, loaded at run time and kept in the shared cache for a day, and the
codes a report takes from them: its invoice type, its payment means and the category of
each tax line.

Codes are chosen by what they name, never by number: public copies of NRS's lists
disagree on the numbers (its sandbox lists 380 as "Credit Note" and 381 as "Commercial
Invoice", the reverse of UN/EDIFACT 1001's), so the service reads the list NRS serves.
"""

from __future__ import annotations

import re
from datetime import timedelta

from django.core.cache import cache

from einvoicing import mbs
from einvoicing.invoices import Incomplete
from receco.lib import sharedcache

KEPT_FOR = timedelta(days=1)
SALE_TYPE = "Commercial Invoice"
CREDIT_NOTE_TYPE = "Credit Note"
# The words a POS writes its payment method with, and the word NRS's payment means name it by.
PAYMENT_WORDS = {
    "cash": "cash",
    "card": "card",
    "pos": "card",
    "debit": "card",
    "credit": "card",
    "visa": "card",
    "mastercard": "card",
    "verve": "card",
    "transfer": "transfer",
    "bank": "transfer",
}
# A tax line named like this (VAT, "Value added tax") is VAT: the standard rate's category, or zero's.
_VAT = re.compile(r"\bVAT\b|VALUE.?ADDED", re.I)
STANDARD_VAT = "STANDARD_VAT"
ZERO_VAT = "ZERO_VAT"


def code_list(client: mbs.Client, name: str) -> list[mbs.Code]:
    """The code list ``name``, from the shared cache or NRS (kept for KEPT_FOR). Raises
    mbs.Refused or mbs.Unavailable when NRS does not give it."""
    key = f"einvoicing:codes:{name}"
    kept = sharedcache.guarded("einvoicing codes", lambda: cache.get(key), None)
    if kept is not None:
        return [mbs.Code(code, value) for code, value in kept]
    codes = client.codes(name)
    pairs = [(entry.code, entry.value) for entry in codes]
    sharedcache.guarded("einvoicing codes", lambda: cache.set(key, pairs, KEPT_FOR.total_seconds()), None)
    return codes


def invoice_type(client: mbs.Client, *, credit_note: bool) -> str:
    """The code of a sale's invoice type (a commercial invoice) or a refund's (a credit
    note). Raises Incomplete when NRS's list names neither."""
    wanted = CREDIT_NOTE_TYPE if credit_note else SALE_TYPE
    codes = code_list(client, mbs.INVOICE_TYPES)
    for entry in codes:
        if _words(entry.value) == _words(wanted):
            return entry.code
    raise Incomplete(f"NRS's invoice types name no {wanted!r}")


def payment_means(client: mbs.Client, method: str | None) -> str | None:
    """The code of the payment means ``method`` (a POS's word: card, cash, transfer...)
    names, or None when it names none NRS lists (the report then leaves it out)."""
    words = [PAYMENT_WORDS[word] for word in _words(method or "") if word in PAYMENT_WORDS]
    if not words:
        return None
    for entry in code_list(client, mbs.PAYMENT_MEANS):
        if words[0] in _words(entry.value):
            return entry.code
    return None


def tax_category(client: mbs.Client, name: str, rate: float) -> str:
    """The category of a tax line named ``name`` at ``rate`` percent: the code its name
    spells (``LOCAL_SALES_TAX``), else for VAT the standard or zero rate's. Raises
    Incomplete when NRS lists none for it."""
    listed = {entry.code for entry in code_list(client, mbs.TAX_CATEGORIES)}
    spelled = "_".join(_words(name)).upper()
    if spelled in listed:
        return spelled
    if _VAT.search(name):
        vat = ZERO_VAT if rate == 0 else STANDARD_VAT
        if vat in listed:
            return vat
    raise Incomplete(f"The tax line {name!r} names no tax category NRS lists ({', '.join(sorted(listed))})")


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())
