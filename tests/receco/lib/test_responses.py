"""receco.lib.responses: a header the service made, set as ``response[name] = value`` would."""

from django.http import HttpResponse

from receco.lib.responses import set_made


def _checked(*headers):
    response = HttpResponse(b"{}", content_type="application/json")
    for name, value in headers:
        response[name] = value
    return response


def _made(*headers):
    response = HttpResponse(b"{}", content_type="application/json")
    for name, value in headers:
        set_made(response, name, value)
    return response


HEADERS = (("X-Request-ID", "abc-1"), ("Content-Length", "2"), ("RateLimit", '"minute";r=9;t=60'))


def test_a_made_header_reads_back_as_a_checked_one_does():
    response = _made(*HEADERS)
    assert response["x-request-id"] == "abc-1"
    assert response.has_header("CONTENT-LENGTH")
    assert list(response.items()) == list(_checked(*HEADERS).items())


def test_a_made_header_keeps_its_place_when_set_again():
    response = _made(*HEADERS, ("X-Request-ID", "abc-2"))
    assert list(response.items()) == [
        ("Content-Type", "application/json"),
        ("X-Request-ID", "abc-2"),
        ("Content-Length", "2"),
        ("RateLimit", '"minute";r=9;t=60'),
    ]


def test_a_made_header_replaces_a_checked_one_of_any_case():
    response = _checked(("x-frame-options", "SAMEORIGIN"))
    set_made(response, "X-Frame-Options", "DENY")
    assert list(response.items()) == [("Content-Type", "application/json"), ("X-Frame-Options", "DENY")]
