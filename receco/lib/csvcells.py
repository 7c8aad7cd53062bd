"""CSV cells a spreadsheet opens as text: the one guard against CSV injection (OWASP)
for every CSV the service writes (the dashboard's export of sales, the customer's
download of their receipts)."""

# A spreadsheet runs a cell that starts with one of these as a formula; item names,
# locations and shop names are free text from the POS.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")


def safe_cell(value: object) -> object:
    """``value`` as a CSV cell a spreadsheet shows as text: a string that would start a
    formula gets a leading apostrophe; numbers and other strings are kept."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value
