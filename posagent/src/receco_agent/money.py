"""Amounts in minor units (kobo, cents) written the way customers read them: ``₦1,300.00``.

The agent's copy of the service's rules (receipts.money), which its receipt pages use: a
test of the service's repository (tests/agent/test_service_rules.py) fails when the two
differ.
"""

from dataclasses import dataclass

# The service's currency when a sale names none.
DEFAULT_CURRENCY = "NGN"


@dataclass(frozen=True)
class Currency:
    symbol: str  # written before the amount, with any space it needs
    digits: int  # minor-unit digits (ISO 4217 exponent)


# Common currencies of Receco's merchants. The exponent is ISO 4217's: JPY and most
# CFA francs have no minor unit, the Gulf dinars three. Anything else is shown with its
# code and two decimals.
CURRENCIES = {
    "NGN": Currency("₦", 2),
    "GHS": Currency("GH₵", 2),
    "KES": Currency("KSh\u00a0", 2),
    "UGX": Currency("USh\u00a0", 0),
    "TZS": Currency("TSh\u00a0", 2),
    "RWF": Currency("FRw\u00a0", 0),
    "ZAR": Currency("R", 2),
    "EGP": Currency("E£", 2),
    "MAD": Currency("MAD\u00a0", 2),
    "XOF": Currency("CFA\u00a0", 0),
    "XAF": Currency("FCFA\u00a0", 0),
    "USD": Currency("$", 2),
    "CAD": Currency("CA$", 2),
    "AUD": Currency("A$", 2),
    "EUR": Currency("€", 2),
    "GBP": Currency("£", 2),
    "CHF": Currency("CHF\u00a0", 2),
    "INR": Currency("₹", 2),
    "CNY": Currency("CN¥", 2),
    "JPY": Currency("¥", 0),
    "KRW": Currency("₩", 0),
    "VND": Currency("₫", 0),
    "ISK": Currency("ISK\u00a0", 0),
    "CLP": Currency("CLP\u00a0", 0),
    "AED": Currency("AED\u00a0", 2),
    "SAR": Currency("SAR\u00a0", 2),
    "BHD": Currency("BHD\u00a0", 3),
    "KWD": Currency("KWD\u00a0", 3),
    "OMR": Currency("OMR\u00a0", 3),
    "JOD": Currency("JOD\u00a0", 3),
    "TND": Currency("TND\u00a0", 3),
}


def currency_info(code: str | None) -> Currency:
    """Return how to write amounts of ``code``; unknown codes get the code and two decimals."""
    code = (code or "").upper()
    return CURRENCIES.get(code) or Currency(f"{code}\u00a0", 2)


def format_amount(minor_units: int, code: str | None, *, symbol: bool = True) -> str:
    """``format_amount(130000, "NGN")`` -> ``₦1,300.00``; ``(1500, "JPY")`` -> ``¥1,500``.

    With ``symbol=False`` the ISO code is written instead (``NGN 1,300.00``), for a
    terminal that cannot show the symbol.
    """
    currency = currency_info(code)
    sign = "-" if minor_units < 0 else ""
    units, fraction = divmod(abs(int(minor_units)), 10**currency.digits)
    number = f"{units:,}"
    if currency.digits:
        number += f".{fraction:0{currency.digits}d}"
    prefix = currency.symbol if symbol else f"{(code or '').upper()} "
    return f"{sign}{prefix}{number}"
