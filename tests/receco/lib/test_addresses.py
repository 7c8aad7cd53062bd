"""The client address limits count against (receco.lib.addresses)."""

import ipaddress

from django.test import RequestFactory

from receco.lib.addresses import client_address, client_ip, plain_text


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

    def test_an_ipv4_mapped_address_is_the_ipv4_address_it_carries(self, settings):
        settings.RECECO_TRUSTED_PROXY_COUNT = 0
        assert client_ip(_request("::ffff:203.0.113.9")) == "203.0.113.9"
        assert client_ip(_request("::ffff:198.51.100.7")) == "198.51.100.7"  # not the same /64
        assert client_address(_request("::ffff:127.0.0.1")) == ipaddress.ip_address("127.0.0.1")

    def test_a_mapped_forwarded_address_is_read_the_same_way(self, settings):
        settings.RECECO_TRUSTED_PROXY_COUNT = 1
        assert client_ip(_request("::ffff:10.0.0.5", forwarded="::ffff:198.51.100.1")) == "198.51.100.1"

    def test_logs_show_a_mapped_address_as_ipv4(self):
        assert plain_text("::ffff:127.0.0.1") == "127.0.0.1"
        assert plain_text("2001:db8::1") == "2001:db8::1"
        assert plain_text("-") == "-"
