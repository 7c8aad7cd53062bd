import io
import re

import pytest
import qrcode
from PIL import Image

from receco.lib.qr import qr_png, qr_svg

pytestmark = pytest.mark.django_db

URL = "https://receipts.example.test/app/receipt/rcpt_mfx3k2a1_q8z0lp"


def _expected_modules(data: str) -> list[list[bool]]:
    code = qrcode.QRCode(error_correction=qrcode.constants.ERROR_CORRECT_M, border=4)
    code.add_data(data)
    code.make(fit=True)
    return code.get_matrix()


def _png_modules(png: bytes, size: int) -> list[list[bool]]:
    image = Image.open(io.BytesIO(png)).convert("L")
    assert image.width == image.height
    step = image.width / size
    return [
        [image.getpixel((int((x + 0.5) * step), int((y + 0.5) * step))) < 128 for x in range(size)] for y in range(size)
    ]


def _svg_modules(svg: str) -> list[list[bool]]:
    size = int(re.search(r'viewBox="0 0 (\d+) \1"', svg).group(1))
    grid = [[False] * size for _ in range(size)]
    for x, y, length in re.findall(r"M(\d+) (\d+)h(\d+)v1h-\3z", svg):
        for column in range(int(x), int(x) + int(length)):
            grid[int(y)][column] = True
    return grid


def test_the_png_draws_the_code_of_the_link():
    expected = _expected_modules(URL)
    assert _png_modules(qr_png(URL), len(expected)) == expected


def test_the_svg_draws_the_code_of_the_link():
    svg = qr_svg(URL, title="QR code")
    assert _svg_modules(svg) == _expected_modules(URL)
    assert len(svg) < 5000  # small enough to inline in the page


def test_the_svg_title_is_escaped():
    assert "<title>a &lt;b&gt;</title>" in qr_svg(URL, title="a <b>")


@pytest.mark.parametrize(("kind", "content_type"), [("png", "image/png"), ("svg", "image/svg+xml")])
def test_it_serves_the_receipt_link_as_an_image(client, receipt, kind, content_type):
    response = client.get(f"/app/receipt/{receipt.token}/qr.{kind}")
    assert response.status_code == 200
    assert response["Content-Type"] == content_type
    assert response["Cache-Control"] == "public, max-age=31536000, immutable"
    assert response["ETag"].startswith('"')
    if kind == "png":
        expected = _expected_modules(receipt.public_url)
        assert _png_modules(response.content, len(expected)) == expected
    else:
        assert _svg_modules(response.content.decode()) == _expected_modules(receipt.public_url)


def test_it_answers_304_to_a_known_etag_without_a_query(client, receipt, django_assert_num_queries):
    etag = client.get(f"/app/receipt/{receipt.token}/qr.png")["ETag"]
    with django_assert_num_queries(0):
        response = client.get(f"/app/receipt/{receipt.token}/qr.png", headers={"If-None-Match": etag})
    assert response.status_code == 304
    assert response["ETag"] == etag
    assert response.content == b""


def test_the_etag_changes_with_the_link(client, receipt, settings):
    first = client.get(f"/app/receipt/{receipt.token}/qr.svg")["ETag"]
    settings.RECECO_WEB_URL = "https://elsewhere.example.test"
    second = client.get(f"/app/receipt/{receipt.token}/qr.svg")
    assert second["ETag"] != first
    assert "elsewhere" not in second.content.decode()  # modules, not text
    assert _svg_modules(second.content.decode()) == _expected_modules(
        f"https://elsewhere.example.test/app/receipt/{receipt.token}"
    )


def test_a_short_code_redirects_to_the_token_image(client, receipt):
    response = client.get("/app/receipt/k7p2qx/qr.png")
    assert response.status_code == 302
    assert response["Location"] == f"/app/receipt/{receipt.token}/qr.png"


def test_an_unknown_receipt_has_no_image(client, receipt):
    response = client.get("/app/receipt/rcpt_unknown_000000/qr.png")
    assert response.status_code == 404
    assert "ETag" not in response
