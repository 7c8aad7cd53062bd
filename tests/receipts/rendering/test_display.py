import pytest

from merchants.colors import HOUSE_ACCENT_COLOR
from receipts.rendering.display import accent_color, contrast_ratio, logo_url, origin, text_color_on


@pytest.mark.parametrize(
    "value", ["red", "#fff", "#12345g", "#123456; background:url(x)", "expression(alert(1))", None, 123]
)
def test_only_rrggbb_reaches_css(value):
    assert accent_color(value) == HOUSE_ACCENT_COLOR


def test_it_lowercases_a_valid_colour():
    assert accent_color("#C2410C") == "#c2410c"


@pytest.mark.parametrize(
    "background", ["#ffeb3b", "#c2410c", "#0f766e", "#000000", "#ffffff", "#777777", "#767676", "#7a7a7a"]
)
def test_header_text_is_readable_on_any_accent(background):
    assert contrast_ratio(background, text_color_on(background)) >= 4.5


@pytest.mark.parametrize(
    "value",
    [
        "javascript:alert(1)",
        "data:image/png;base64,AAAA",
        "//cdn.example.com/logo.png",
        "ftp://cdn.example.com/logo.png",
        "https://user:pw@cdn.example.com/logo.png",
        "https://cdn.example.com;script-src/logo.png",
        "https://cdn.example.com:99999/logo.png",
        "",
        None,
    ],
)
def test_logos_only_come_from_plain_http_urls(value):
    assert logo_url(value) is None


def test_a_logo_origin_is_safe_for_the_policy_header():
    assert logo_url("https://CDN.example.com:8443/a/logo.png?v=2") == "https://CDN.example.com:8443/a/logo.png?v=2"
    assert origin("https://CDN.example.com:8443/a/logo.png?v=2") == "https://cdn.example.com:8443"
