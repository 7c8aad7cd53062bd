"""The dashboard's plain words for the service's codes, the technical name behind a
"Details" for whoever needs it (a developer setting up a till)."""

from django.utils.html import format_html
from django.utils.safestring import SafeString

# The schemes receipts name (receipts.rendering.display.TAX_SCHEMES gives their short names).
TAX_ID_TYPES = [
    ("NG_TIN", "Nigerian Tax ID (TIN)"),
    ("GH_TIN", "Ghanaian Tax ID (TIN)"),
    ("KE_PIN", "Kenyan KRA PIN"),
    ("ZA_VAT", "South African VAT number"),
    ("EU_VAT", "EU VAT number"),
]
NO_TAX_ID = ("", "None")

# Fields of the audited records by the dashboard's names, where theirs are the API's (the
# audit trail's changes: "test shop: No", not "is test: No").
FIELD_WORDS = {
    "string_id": "shop id",
    "is_test": "test shop",
    "require_api_key": "require API key",
    "logo_url": "logo URL",
    "tax_id_scheme": "tax ID type",
    "tax_id": "tax ID",
}


def details(text: str, technical: str) -> SafeString:
    """``text``, then a "Details" that opens on the technical words (escaped)."""
    return format_html('{}<details class="technical"><summary>Details</summary>{}</details>', text, technical)


def tax_id_type(code: str) -> str:
    """A tax identifier scheme in words: ``NG_TIN`` -> ``Nigerian Tax ID (TIN)``; a scheme
    not listed is shown as it is."""
    return dict(TAX_ID_TYPES).get(code, code) if code else "—"
