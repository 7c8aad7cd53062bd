"""QR codes of receipt URLs: a PNG data URL for the POS, text art for the terminal."""

import base64
import struct
import zlib
from typing import TextIO

import qrcode

BOX_SIZE = 8  # pixels a side of one module: a byte of a row (png_bytes)
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
    """Return a PNG image of the QR code encoding ``data``: one bit a pixel, white the
    quiet zone and light modules, each module BOX_SIZE (8) pixels a side, so one byte of
    a row's pixels."""
    # Written here rather than drawn by qrcode's PilImage (a rectangle a module) or made by
    # Pillow from a list of pixels and scaled up: the same image, in under half the time
    # (the POS waits for it on every sale).
    matrix = _qr(data).get_matrix()  # with the border
    side = len(matrix) * BOX_SIZE
    rows = []
    for row in matrix:
        line = b"\x00" + bytes([0 if dark else 255 for dark in row])  # filter type 0, then the pixels
        rows.extend([line] * BOX_SIZE)
    header = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)  # 1 bit, greyscale, no interlace
    image = zlib.compress(b"".join(rows))
    return _PNG_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", image) + _chunk(b"IEND", b"")


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_data_url(data: str) -> str:
    """Return ``data:image/png;base64,...`` for the QR code encoding ``data``."""
    return "data:image/png;base64," + base64.b64encode(png_bytes(data)).decode("ascii")


def print_text(data: str, out: TextIO) -> None:
    """Write the QR code encoding ``data`` to ``out`` as block characters."""
    # invert=True draws dark modules as spaces, which scans on the usual dark terminal.
    _qr(data).print_ascii(out=out, invert=True)
