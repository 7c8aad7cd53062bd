"""QR codes of receipt URLs: a PNG data URL for the POS, text art for the terminal."""

import base64
import io
from typing import TextIO

import qrcode
from qrcode.image.pil import PilImage

# Any of the 8 mask patterns makes a valid code; picking the best by the standard's penalty
# score draws the code 8 times, which took 40 ms of the POS's wait on a busy till PC.
MASK_PATTERN = 0


def _qr(data: str) -> qrcode.QRCode:
    code = qrcode.QRCode(
        error_correction=qrcode.constants.ERROR_CORRECT_M, box_size=8, border=4, mask_pattern=MASK_PATTERN
    )
    code.add_data(data)
    code.make(fit=True)
    return code


def png_bytes(data: str) -> bytes:
    """Return a PNG image of the QR code encoding ``data``."""
    buffer = io.BytesIO()
    _qr(data).make_image(image_factory=PilImage).save(buffer, format="PNG")
    return buffer.getvalue()


def png_data_url(data: str) -> str:
    """Return ``data:image/png;base64,...`` for the QR code encoding ``data``."""
    return "data:image/png;base64," + base64.b64encode(png_bytes(data)).decode("ascii")


def print_text(data: str, out: TextIO) -> None:
    """Write the QR code encoding ``data`` to ``out`` as block characters."""
    # invert=True draws dark modules as spaces, which scans on the usual dark terminal.
    _qr(data).print_ascii(out=out, invert=True)
