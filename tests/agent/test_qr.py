"""The QR code the agent hands the POS: the image qrcode's own renderer draws."""

import base64
import io

import qrcode
from PIL import Image, ImageChops
from qrcode.image.pil import PilImage
from receco_agent import qr

URL = "https://receco.example/r/rcpt_mfx3k2a1_q8z0lp4d2x"


def test_png_is_the_code_qrcode_draws_pixel_for_pixel():
    expected = qrcode.QRCode(error_correction=qrcode.constants.ERROR_CORRECT_M, box_size=8, border=4, mask_pattern=0)
    expected.add_data(URL)
    drawn = expected.make_image(image_factory=PilImage).get_image()

    image = Image.open(io.BytesIO(qr.png_bytes(URL)))

    assert (image.format, image.mode, image.size) == ("PNG", "1", drawn.size)
    assert ImageChops.difference(image.convert("L"), drawn.convert("L")).getbbox() is None


def test_data_url_carries_the_png():
    prefix = "data:image/png;base64,"
    url = qr.png_data_url(URL)
    assert url.startswith(prefix)
    assert base64.b64decode(url[len(prefix) :]) == qr.png_bytes(URL)


def test_a_longer_url_makes_a_bigger_code_with_its_quiet_zone():
    small = Image.open(io.BytesIO(qr.png_bytes("https://r.example/a")))
    large = Image.open(io.BytesIO(qr.png_bytes(URL + "x" * 200)))
    assert large.size[0] > small.size[0]
    # Four modules of white border on every side.
    for image in (small, large):
        side = image.size[0]
        border = [image.getpixel((x, y)) for x in range(side) for y in range(32)]
        assert set(border) == {255}
