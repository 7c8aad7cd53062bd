"""Endpoint URLs: https; http only for localhost, and only where allowed."""

import pytest
from django.core.exceptions import ValidationError

from webhooks.addresses import HTTPS_ONLY, NO_CREDENTIALS, NOT_A_URL, validate_url


@pytest.mark.parametrize("url", ["https://hooks.example.com/receco", "https://10.0.0.5:8443/hooks"])
def test_https_urls_are_accepted(url):
    validate_url(url)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://hooks.example.com/receco", HTTPS_ONLY),
        ("ftp://hooks.example.com/", NOT_A_URL),
        ("hooks.example.com", NOT_A_URL),
        ("https://user:pass@hooks.example.com/", NO_CREDENTIALS),
    ],
)
def test_other_urls_are_refused(url, message):
    with pytest.raises(ValidationError) as error:
        validate_url(url)
    assert error.value.messages == [message]


@pytest.mark.parametrize("url", ["http://localhost:8080/hooks", "http://127.0.0.1/hooks", "http://[::1]:9000/"])
def test_http_localhost_is_refused_by_default(settings, url):
    settings.DEBUG = False
    settings.RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST = False
    with pytest.raises(ValidationError):
        validate_url(url)


@pytest.mark.parametrize("allow", ["DEBUG", "RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST"])
def test_http_localhost_is_accepted_with_debug_or_the_setting(settings, allow):
    settings.DEBUG = False
    settings.RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST = False
    setattr(settings, allow, True)
    validate_url("http://localhost:8080/hooks")
    with pytest.raises(ValidationError):
        validate_url("http://hooks.example.com/")
