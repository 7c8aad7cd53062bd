"""The HTTP client: one POST to the endpoint's own URL, no redirects followed, no private addresses."""

import ipaddress
import socket

import pytest

from tests.receivers import SlowReceiver
from webhooks import client
from webhooks.addresses import AddressRefused, is_public, resolve


def test_a_redirect_is_an_answer_not_followed(receiver):
    receiver.status = 302
    receiver.location = receiver.url + "/elsewhere"
    answer = client.post(receiver.url, b"{}", {}, timeout=5)
    assert answer.status == 302
    assert [request["path"] for request in receiver.requests] == ["/hooks"]


def test_it_sends_the_body_and_headers_and_nothing_else(receiver):
    client.post(receiver.url + "?source=receco", b'{"a":1}', {"Receco-Event-Id": "evt_1"}, timeout=5)
    (request,) = receiver.requests
    assert request["path"] == "/hooks?source=receco"
    assert request["body"] == b'{"a":1}'
    assert set(request["headers"]) == {"Host", "User-Agent", "Content-Type", "Content-Length", "Receco-Event-Id"}
    assert request["headers"]["Host"] == receiver.url.split("/")[2]


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1",  # noqa: S104
     "fe80::1", "fd00::1", "::ffff:127.0.0.1", "224.0.0.1",
     # Issue 19.14: IPv6 forms that carry a private IPv4 address, and deprecated ranges.
     "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::", "2002:a00:1::1", "::127.0.0.1", "::10.0.0.1",
     "::8.8.8.8", "::ffff:0:127.0.0.1", "::ffff:0:a9fe:a9fe", "fec0::1", "64:ff9b:1::a00:1"],
)  # fmt: skip
def test_private_loopback_and_link_local_addresses_are_not_public(address):
    assert not is_public(ipaddress.ip_address(address))


REFUSED = (
    "resolves to no public internet address: not allowed "
    "(receivers on your own network need RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES=1)"
)


@pytest.mark.parametrize(
    "address",
    ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"],
)
def test_public_addresses_are(address):
    assert is_public(ipaddress.ip_address(address))


def test_a_name_that_resolves_to_a_private_address_is_refused(settings):
    settings.RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = False
    settings.RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST = False
    with pytest.raises(AddressRefused) as refused:
        resolve("localhost", 80)
    assert str(refused.value) == f"localhost {REFUSED}"


def test_in_debug_a_receiver_on_this_machine_is_allowed(settings):
    """Issue 26.1: with ./dev up (debug), an endpoint at http://127.0.0.1:8765/hook was
    accepted and then every delivery failed: loopback receivers work where http://localhost
    is allowed; other private addresses still need RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES."""
    settings.RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = False
    settings.DEBUG = True
    assert resolve("127.0.0.1", 8765) == [(socket.AF_INET, "127.0.0.1")]
    with pytest.raises(AddressRefused):
        resolve("10.20.30.40", 443)


def test_the_refusal_does_not_name_the_address_a_name_resolved_to(settings, monkeypatch):
    """Issue 19.14: the message, shown to the endpoint's owner, named the private address,
    which let an owner map the service's internal DNS."""
    settings.RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = False
    found = [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.20.30.40", 443))]
    monkeypatch.setattr(socket, "getaddrinfo", lambda *args, **kwargs: found)
    with pytest.raises(client.SendError) as refused:
        client.post("https://billing.internal.example/hooks", b"{}", {}, timeout=5)
    assert str(refused.value) == f"billing.internal.example {REFUSED}"


def test_the_request_is_not_made_to_a_refused_address(settings, receiver):
    settings.RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = False
    settings.RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST = False
    with pytest.raises(client.SendError, match="resolves to no public internet address"):
        client.post(receiver.url, b"{}", {}, timeout=5)
    assert receiver.requests == []


def test_it_connects_to_the_address_it_checked(settings, receiver, monkeypatch):
    """A name that resolves to a public address when checked and a private one after (DNS
    rebinding) reaches only the address checked: the name is resolved once."""
    port = int(receiver.url.split(":")[2].split("/")[0])
    answers = iter([[(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]])
    monkeypatch.setattr(socket, "getaddrinfo", lambda *args, **kwargs: next(answers))
    client.post(f"http://rebinding.example:{port}/hooks", b"{}", {}, timeout=5)  # a second look-up would raise
    assert len(receiver.requests) == 1


def test_private_addresses_may_be_allowed_by_the_setting(receiver):
    assert resolve("127.0.0.1", 80) == [(socket.AF_INET, "127.0.0.1")]
    assert client.post(receiver.url, b"{}", {}, timeout=5).status == 200


def test_a_silent_server_times_out():
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    try:
        with pytest.raises(client.SendError, match=r"^no answer within 0\.3 s$") as failure:
            client.post(f"http://127.0.0.1:{silent.getsockname()[1]}/", b"{}", {}, timeout=0.3)
        assert failure.value.duration_ms >= 300
    finally:
        silent.close()


# --- The deadline is the whole exchange's (issue 19, item 2) -----------------------------


@pytest.fixture
def slow():
    servers = []

    def start(**options):
        servers.append(SlowReceiver(**options))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def test_an_answer_trickled_a_byte_at_a_time_is_cut_off_at_the_deadline(slow):
    """Each byte comes well within any one read's timeout; the answer would take 30 s."""
    receiver = slow(every=0.5, length=60)
    with pytest.raises(client.SendError, match=r"^no answer within 2 s$") as failure:
        client.post(receiver.url, b"{}", {}, timeout=2)
    assert 2000 <= failure.value.duration_ms < 6000
    assert len(receiver.arrived) == 1  # the request went out whole; only the answer was slow


def test_a_tls_handshake_trickled_a_byte_at_a_time_is_cut_off_at_the_deadline(slow):
    """A server that sends the start of a TLS record and then one byte of it at a time."""
    receiver = slow(every=0.2, answer=b"\x16\x03\x03\x00\x40" + bytes(64))
    url = receiver.url.replace("http://", "https://")
    with pytest.raises(client.SendError, match=r"^no answer within 1 s$") as failure:
        client.post(url, b"{}", {}, timeout=1)
    assert 1000 <= failure.value.duration_ms < 5000
