"""QR codes of receipt URLs: a PNG data URL for the POS, text art for the terminal."""

import base64
import io
from typing import TextIO

import qrcode
from PIL import Image

BOX_SIZE = 8  # pixels a side of one module
# Any of the 8 mask patterns makes a valid code; picking the best by the standard's penalty
# score draws the code 8 times, which took 40 ms of the POS's wait on a busy till PC.
MASK_PATTERN = 0


def _qr(data: str) -> qrcode.QRCode:
    code = qrcode.QRCode(
        error_correction=qrcode.constants.ERROR_CORRECT_M, box_size=BOX_SIZE, border=4, mask_pattern=MASK_PATTERN
    )
    code.add_data(data)
    code.make(fit=True)
    return code


def png_bytes(data: str) -> bytes:
    """Return a PNG image of the QR code encoding ``data``."""
    # One pixel a module, then scaled up: the same image as qrcode's PilImage, which draws
    # each module as a rectangle, in half the time (the POS waits for it).
    matrix = _qr(data).get_matrix()  # with the border
    side = len(matrix)
    image = Image.new("1", (side, side))
    image.putdata([0 if dark else 255 for row in matrix for dark in row])
    buffer = io.BytesIO()
    image.resize((side * BOX_SIZE, side * BOX_SIZE), Image.Resampling.NEAREST).save(buffer, format="PNG")
    return buffer.getvalue()


def png_data_url(data: str) -> str:
    """Return ``data:image/png;base64,...`` for the QR code encoding ``data``."""
    return "data:image/png;base64," + base64.b64encode(png_bytes(data)).decode("ascii")


def print_text(data: str, out: TextIO) -> None:
    """Write the QR code encoding ``data`` to ``out`` as block characters."""
    # invert=True draws dark modules as spaces, which scans on the usual dark terminal.
    _qr(data).print_ascii(out=out, invert=True)
