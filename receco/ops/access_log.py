"""gunicorn's access log without receipt references: the path of a receipt page holds the
token that opens the receipt, and logs are kept and shared. gunicorn.conf.py names this
logger class."""

import re

from gunicorn.glogging import Logger

from receco.lib.addresses import plain_text

# A receipt's token or short code: the path segment after a "receipt" segment
# (/app/receipt/<reference>, its /send, /qr.png, ...), or after a text message's short
# link (/r/<short code>, /n/<short code>).
_REFERENCE = re.compile(r"(/receipt/|^/[rn]/)[^/]+")


def redact(path: str) -> str:
    """``path`` with every receipt reference replaced by "*"."""
    return _REFERENCE.sub(r"\1*", path)


class AccessLogger(Logger):
    def atoms(self, resp, req, environ, request_time):
        atoms = super().atoms(resp, req, environ, request_time)
        atoms["h"] = plain_text(atoms["h"])  # behind -b [::], an IPv4 client as its IPv4 address
        atoms["U"] = redact(atoms["U"] or "")
        atoms["r"] = "-"  # the raw request line: the unredacted path and the query string
        return atoms
