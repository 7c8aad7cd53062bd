"""Amounts in minor units (kobo, cents) shown the way customers read them (``₦1,300.00``),
and read back from what a shop owner types (``19,522.50``)."""

import re
from dataclasses import dataclass
from decimal import Decimal

from receco_verify.money import minor_digits


@dataclass(frozen=True)
class Currency:
    symbol: str  # written before the amount, with any space it needs
    digits: int  # minor-unit digits (ISO 4217 exponent)


# Common currencies of Receco's merchants, with their symbols. Their exponents are
# receco_verify.money's (ISO 4217's: JPY and most CFA francs have no minor unit, the Gulf
# dinars three), which the receipt files and both verifiers read amounts by. Anything else
# is shown with its code and two decimals.
SYMBOLS = {
    "NGN": "₦",
    "GHS": "GH₵",
    "KES": "KSh\u00a0",
    "UGX": "USh\u00a0",
    "TZS": "TSh\u00a0",
    "RWF": "FRw\u00a0",
    "ZAR": "R",
    "EGP": "E£",
    "MAD": "MAD\u00a0",
    "XOF": "CFA\u00a0",
    "XAF": "FCFA\u00a0",
    "USD": "$",
    "CAD": "CA$",
    "AUD": "A$",
    "EUR": "€",
    "GBP": "£",
    "CHF": "CHF\u00a0",
    "INR": "₹",
    "CNY": "CN¥",
    "JPY": "¥",
    "KRW": "₩",
    "VND": "₫",
    "ISK": "ISK\u00a0",
    "CLP": "CLP\u00a0",
    "AED": "AED\u00a0",
    "SAR": "SAR\u00a0",
    "BHD": "BHD\u00a0",
    "KWD": "KWD\u00a0",
    "OMR": "OMR\u00a0",
    "JOD": "JOD\u00a0",
    "TND": "TND\u00a0",
}
CURRENCIES = {code: Currency(symbol, minor_digits(code)) for code, symbol in SYMBOLS.items()}


def currency_info(code: str) -> Currency:
    """Return how to write amounts of ``code``; unknown codes get the code and two decimals."""
    code = (code or "").upper()
    return CURRENCIES.get(code) or Currency(f"{code}\u00a0", minor_digits(code))


def format_amount(minor_units: int, code: str, *, symbol: bool = True) -> str:
    """``format_amount(130000, "NGN")`` -> ``₦1,300.00``; ``(1500, "JPY")`` -> ``¥1,500``.

    With ``symbol=False`` the ISO code is written instead (``NGN 1,300.00``), which text
    messages need: most currency symbols are not in the GSM alphabet.
    """
    currency = currency_info(code)
    sign = "-" if minor_units < 0 else ""
    units, fraction = divmod(abs(int(minor_units)), 10**currency.digits)
    number = f"{units:,}"
    if currency.digits:
        number += f".{fraction:0{currency.digits}d}"
    prefix = currency.symbol if symbol else f"{(code or '').upper()} "
    return f"{sign}{prefix}{number}"


def plain_amount(minor_units: int, code: str) -> str:
    """``plain_amount(134000, "NGN")`` -> ``1340.00``: the amount as a spreadsheet reads a
    number (no symbol, no thousands separator), with the currency's decimal places."""
    return f"{Decimal(int(minor_units)).scaleb(-currency_info(code).digits):f}"


# An amount as people type it: "19,522.50", "19522.5", "₦19,522.50", "NGN 19522.50". Commas
# only between groups of three digits, so that "19,5" is not read as 195.
_TYPED_AMOUNT = re.compile(r"^(?:[^\d\s.,+-]{1,4}\s?)?(\d{1,3}(?:,\d{3})+|\d{1,18})(?:\.(\d{1,18}))?$")


def typed_amount(text: str) -> Decimal | None:
    """The amount in major units that ``text`` says, as a shop owner types it (thousands
    commas, a currency symbol or code in front, any number of decimals), or None when it
    is not an amount."""
    match = _TYPED_AMOUNT.match(text.strip())
    if match is None:
        return None
    units, fraction = match.groups()
    return Decimal(f"{units.replace(',', '')}.{fraction or '0'}")


def to_minor(amount: Decimal, digits: int) -> int | None:
    """``amount`` in minor units of a currency with ``digits`` minor-unit digits, or None
    when it has more decimals than the currency has (19522.505 naira)."""
    scaled = amount.scaleb(digits)
    return int(scaled) if scaled == scaled.to_integral_value() else None


def minor_units(text: str, code: str) -> int:
    """What ``text``, typed in major units of currency ``code``, is in minor units.
    Raises ValueError saying what is wrong."""
    amount = typed_amount(text)
    if amount is None:
        raise ValueError("Type an amount such as 1,500.00 or 1500")
    digits = currency_info(code).digits
    minor = to_minor(amount, digits)
    if minor is None:
        places = f"at most {digits} decimal places" if digits else "no decimal places"
        raise ValueError(f"Amounts in {(code or '').upper()} have {places}")
    return minor


def digits_of_currencies() -> dict[int, list[str]]:
    """The known currencies by their number of minor-unit digits; unknown ones have 2."""
    grouped: dict[int, list[str]] = {}
    for code, currency in CURRENCIES.items():
        grouped.setdefault(currency.digits, []).append(code)
    return grouped
