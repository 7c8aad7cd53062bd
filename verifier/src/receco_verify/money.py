"""Amounts: signed content states them in minor units (kobo, cents), a receipt file in major
units (ORF: 130000 NGN is 1300.0). The exponent of each currency is ISO 4217's; the
service's own table (its receipts, pages and files) is this one.
"""

# The currencies whose exponent is not 2 among those Receco's merchants use, and the ones
# with 2 that it names; any other code has 2 as well.
MINOR_DIGITS = {
    "NGN": 2, "GHS": 2, "KES": 2, "UGX": 0, "TZS": 2, "RWF": 0, "ZAR": 2, "EGP": 2, "MAD": 2, "XOF": 0, "XAF": 0,
    "USD": 2, "CAD": 2, "AUD": 2, "EUR": 2, "GBP": 2, "CHF": 2, "INR": 2, "CNY": 2, "JPY": 0, "KRW": 0, "VND": 0,
    "ISK": 0, "CLP": 0, "AED": 2, "SAR": 2, "BHD": 3, "KWD": 3, "OMR": 3, "JOD": 3, "TND": 3,
}  # fmt: skip
DEFAULT_DIGITS = 2


def minor_digits(code: str | None) -> int:
    """How many digits of ``code``'s amounts are minor units: 2 for NGN, 0 for JPY, 3 for
    KWD, and 2 for a code not in MINOR_DIGITS."""
    return MINOR_DIGITS.get((code or "").upper(), DEFAULT_DIGITS)


def major(minor: int | None, code: str | None) -> int | float | None:
    """``minor`` units of ``code`` in major units, as a receipt file states them: 130000 NGN
    is 1300.0, 1500 JPY is 1500 (an integer, JPY has no minor unit); None stays None."""
    if minor is None:
        return None
    digits = minor_digits(code)
    return minor if digits == 0 else minor / 10**digits
