"""The rate-limit policy's parts: rates, client addresses and the RateLimit headers."""

import pytest
from django.test import RequestFactory

from merchants.ratelimits import Policy, Quota, RateState, client_ip


@pytest.mark.parametrize(
    ("rate", "limit", "window", "described"),
    [
        ("1000/m", 1000, 60, "1000 per minute"),
        ("100/s", 100, 1, "100 per second"),
        ("30/5m", 30, 300, "30 per 300 seconds"),
        ("5000/d", 5000, 86400, "5000 per day"),
    ],
)
def test_rates_are_read(rate, limit, window, described):
    policy = Policy.parse(rate)
    assert (policy.limit, policy.window, policy.describe()) == (limit, window, described)


@pytest.mark.parametrize("rate", ["0/m", "10", "10/x", "ten/m", "10/0m"])
def test_bad_rates_are_refused(rate):
    with pytest.raises(ValueError, match="is not a rate such as 1000/m"):
        Policy.parse(rate)


def test_the_headers_follow_the_ietf_draft():
    state = RateState((Quota(Policy.parse("1000/m"), 997, 42), Quota(Policy.parse("100/s"), 99, 1)))
    assert state.headers() == {
        "RateLimit-Policy": '"minute";q=1000;w=60, "second";q=100;w=1',
        "RateLimit": '"minute";r=997;t=42, "second";r=99;t=1',
    }


def _request(remote="203.0.113.9", forwarded=None):
    extra = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    return RequestFactory().get("/", **extra)


class TestClientAddress:
    def test_it_is_the_remote_address_by_default(self, settings):
        settings.RECECO_TRUSTED_PROXY_COUNT = 0
        assert client_ip(_request(forwarded="198.51.100.1")) == "203.0.113.9"

    def test_one_trusted_proxy_means_the_last_forwarded_address(self, settings):
        settings.RECECO_TRUSTED_PROXY_COUNT = 1
        assert client_ip(_request(forwarded="6.6.6.6, 198.51.100.1")) == "198.51.100.1"

    def test_two_trusted_proxies_skip_the_inner_one(self, settings):
        settings.RECECO_TRUSTED_PROXY_COUNT = 2
        assert client_ip(_request(forwarded="6.6.6.6, 198.51.100.1, 10.0.0.5")) == "198.51.100.1"

    def test_too_few_forwarded_addresses_fall_back_to_the_remote_address(self, settings):
        settings.RECECO_TRUSTED_PROXY_COUNT = 2
        assert client_ip(_request(forwarded="198.51.100.1")) == "203.0.113.9"

    def test_ipv6_addresses_count_per_64(self, settings):
        settings.RECECO_TRUSTED_PROXY_COUNT = 0
        assert client_ip(_request("2001:db8:1:2:aaaa::1")) == "2001:db8:1:2::"
        assert client_ip(_request("2001:db8:1:2:bbbb::7")) == "2001:db8:1:2::"

    def test_a_forwarded_value_that_is_no_address_falls_back_to_the_remote_address(self, settings):
        settings.RECECO_TRUSTED_PROXY_COUNT = 1
        assert client_ip(_request(forwarded="not-an-ip")) == "203.0.113.9"

    def test_without_any_address_all_callers_share_one_allowance(self, settings):
        settings.RECECO_TRUSTED_PROXY_COUNT = 0
        assert client_ip(_request(remote="")) == "unknown"
