"""The icon every Apple Wallet pass must carry (shown on the lock screen and in
notifications): a receipt slip on the house colour, drawn once per process at the three
sizes Apple asks for (29, 58 and 87 pixels square)."""

import functools
import io

from PIL import Image, ImageDraw

from merchants.colors import HOUSE_ACCENT_COLOR

SIZES = {"icon.png": 29, "icon@2x.png": 58, "icon@3x.png": 87}
# Drawn this many times larger, then scaled down: smooth edges without anti-aliasing.
_OVERSAMPLE = 8


@functools.cache
def icons() -> dict[str, bytes]:
    """Each icon's file name in the pass, and its PNG."""
    return {name: _png(size) for name, size in SIZES.items()}


def _png(size: int) -> bytes:
    big = size * _OVERSAMPLE
    image = Image.new("RGB", (big, big), HOUSE_ACCENT_COLOR)
    draw = ImageDraw.Draw(image)
    unit = big / 29
    left, right, top, bottom = 7 * unit, 22 * unit, 4 * unit, 25 * unit
    # The slip, its torn edge a row of teeth at the bottom.
    teeth = 5
    width = (right - left) / teeth
    outline = [(left, top), (right, top), (right, bottom)]
    for tooth in range(teeth, 0, -1):
        outline += [(left + (tooth - 0.5) * width, bottom - 2 * unit), (left + (tooth - 1) * width, bottom)]
    draw.polygon(outline, fill="#ffffff")
    # Three printed lines, the last one short: the total.
    for row, length in enumerate((11, 11, 6)):
        y = top + (4 + row * 4) * unit
        draw.rectangle((left + 2 * unit, y, left + (2 + length) * unit, y + 1.4 * unit), fill=HOUSE_ACCENT_COLOR)
    buffer = io.BytesIO()
    image.resize((size, size), Image.Resampling.LANCZOS).save(buffer, "PNG", optimize=True)
    return buffer.getvalue()
