"""QR codes of receipt links, as PNG (for tills and emails) and SVG (for pages and print)."""

import hashlib
import io

import qrcode
from django.utils.html import escape
from qrcode.constants import ERROR_CORRECT_M

# Bump when the drawing changes, so cached images with the old look are replaced.
_DRAWING_VERSION = "1"
# Modules of white margin around the code: the quiet zone the QR standard asks for.
_BORDER = 4
_PNG_MODULE_PIXELS = 10


def _code(data: str) -> qrcode.QRCode:
    # Level M survives a crease or a smudge on a printed slip and keeps the code small.
    code = qrcode.QRCode(error_correction=ERROR_CORRECT_M, border=_BORDER, box_size=_PNG_MODULE_PIXELS)
    code.add_data(data)
    code.make(fit=True)
    return code


def etag(data: str, kind: str) -> str:
    """A strong ETag for the ``kind`` ("png" or "svg") image of ``data``: same data, same image."""
    digest = hashlib.sha256(f"{_DRAWING_VERSION}:{kind}:{data}".encode()).hexdigest()[:32]
    return f'"{digest}"'


def qr_png(data: str) -> bytes:
    """Return a black-on-white 1-bit PNG of ``data``, 10 pixels per module."""
    buffer = io.BytesIO()
    _code(data).make_image().save(buffer)
    return buffer.getvalue()


def qr_svg(data: str, *, title: str = "") -> str:
    """Return a standalone SVG of ``data``: one path, runs of dark modules merged, so a
    receipt link's code is about 2 KB. ``title`` becomes its accessible name."""
    matrix = _code(data).get_matrix()  # includes the quiet zone
    size = len(matrix)
    runs = []
    for y, row in enumerate(matrix):
        x = 0
        while x < size:
            if not row[x]:
                x += 1
                continue
            start = x
            while x < size and row[x]:
                x += 1
            runs.append(f"M{start} {y}h{x - start}v1h-{x - start}z")
    label = f"<title>{escape(title)}</title>" if title else ""
    role = ' role="img"' if title else ' aria-hidden="true"'
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {size} {size}"{role} shape-rendering="crispEdges">'
        f'{label}<rect width="{size}" height="{size}" fill="#fff"/><path fill="#000" d="{"".join(runs)}"/></svg>'
    )
