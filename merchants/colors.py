import re

from django.core.exceptions import ValidationError

# Used on receipts whose merchant never chose a colour. Contrast with white text
# is above 4.5:1, so headings stay readable.
HOUSE_ACCENT_COLOR = "#0f766e"

_HEX = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")


def normalize_accent_color(value: str) -> str:
    """Return ``value`` as lowercase ``#rrggbb``; raise ValueError if it is not #rgb/#rrggbb."""
    if not isinstance(value, str) or not _HEX.match(value):
        raise ValueError("must be a hex colour like #1a2b3c or #abc")
    digits = value[1:].lower()
    if len(digits) == 3:
        digits = "".join(ch * 2 for ch in digits)
    return f"#{digits}"


def validate_accent_color(value: str) -> None:
    """Model-field validator: only ``#rrggbb`` is stored, so CSS never sees anything else."""
    if not re.fullmatch(r"#[0-9a-f]{6}", value or ""):
        raise ValidationError("Enter a colour as # followed by six lowercase hex digits, e.g. #0f766e.")
