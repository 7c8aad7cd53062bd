"""The client address limits count against (receco.lib.addresses)."""

import ipaddress
import runpy
from pathlib import Path

from django.test import RequestFactory

from receco.lib.addresses import client_address, client_ip, plain_text, with_mapped_forms

ROOT = Path(__file__).resolve().parents[3]


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


def test_gunicorn_trusts_a_local_proxy_behind_a_dual_stack_bind():
    """gunicorn compares the peer's address with FORWARDED_ALLOW_IPS as it comes: behind
    -b [::] the proxy at 127.0.0.1 is ::ffff:127.0.0.1, which "127.0.0.1" did not match."""
    from gunicorn.config import Config
    from gunicorn.http.message import _ip_in_allow_list

    assert with_mapped_forms(["127.0.0.1", "10.0.0.0/8", "::1", "*"]) == [
        "127.0.0.1", "::ffff:7f00:1/128", "10.0.0.0/8", "::ffff:a00:0/104", "::1", "*",
    ]  # fmt: skip
    config = Config()
    config.set("forwarded_allow_ips", ",".join(with_mapped_forms(["127.0.0.1", "10.0.0.0/8"])))
    for peer in ("127.0.0.1", "::ffff:127.0.0.1", "::ffff:10.1.2.3"):
        assert _ip_in_allow_list(peer, config.forwarded_allow_ips, config.forwarded_allow_networks())
    assert not _ip_in_allow_list("::ffff:192.0.2.1", config.forwarded_allow_ips, config.forwarded_allow_networks())
    # gunicorn.conf.py's default, as gunicorn reads it.
    config = Config()
    config.set("forwarded_allow_ips", runpy.run_path(str(ROOT / "gunicorn.conf.py"))["forwarded_allow_ips"])
    assert _ip_in_allow_list("::ffff:127.0.0.1", config.forwarded_allow_ips, config.forwarded_allow_networks())
