"""What a served project said (bench/servers.py): its answers by status are read from its
access log, and from the proxy's for what the proxy answered itself."""

from collections import Counter

from bench import servers
from deploy.proxy import Proxy


def _server(tmp_path, access: bytes, errors: bytes) -> servers.ImageServer:
    (tmp_path / "access.log").write_bytes(access)
    (tmp_path / "error.log").write_bytes(errors)
    return servers.ImageServer(None, "http://127.0.0.1:1", tmp_path / "error.log", tmp_path / "access.log")


ACCESS = (
    b'127.0.0.1 "GET /api/trpc/getReceipt" 200 1234 3ms abc\n'
    b'127.0.0.1 "POST /api/trpc/createReceiptFromPOS" 200 99 5ms def\n'
    b'127.0.0.1 "POST /api/trpc/createReceiptFromPOS" 503 120 5001ms 012\n'
)


def test_the_services_answers_are_read_from_its_access_log(tmp_path):
    statuses = servers.answers_by_status(_server(tmp_path, ACCESS, b""))
    assert statuses == Counter({200: 2, 503: 1})
    assert servers.status_text(statuses) == "200: 2; 503: 1"


def test_the_proxys_own_answers_are_added_from_its_access_log(tmp_path):
    """The proxy logs only what it answered itself (deploy/nginx): a refusal, gunicorn
    unreachable; what gunicorn served is in gunicorn's log alone."""
    server = _server(tmp_path, ACCESS, b"")
    server.proxy = Proxy(None, 1, tmp_path / "nginx")
    server.proxy.prefix.mkdir()
    server.proxy.access_log.write_bytes(b'127.0.0.1 "POST" 429 160 0.000 proxy\n127.0.0.1 "GET" 503 140 0.001 proxy\n')
    assert servers.answers_by_status(server) == Counter({200: 2, 503: 2, 429: 1})


def test_the_answers_after_a_moment_are_counted_from_the_log_sizes_then(tmp_path):
    """bench/connections.py counts from its first check on: the start-up probes (the
    proxy's 503 while gunicorn boots, the service's 400 to a getReceipt without input)
    are not the load's."""
    server = _server(tmp_path, b'127.0.0.1 "GET /api/trpc/getReceipt" 400 134 7ms abc\n', b"")
    server.proxy = Proxy(None, 1, tmp_path / "nginx")
    server.proxy.prefix.mkdir()
    server.proxy.access_log.write_bytes(b'127.0.0.1 "GET" 503 149 0.000 proxy\n')
    since = servers.log_sizes(server)
    with server.access_log.open("ab") as log:
        log.write(ACCESS)
    with server.proxy.access_log.open("ab") as log:
        log.write(b'127.0.0.1 "GET" 499 0 5.001 proxy\n')
    assert servers.answers_by_status(server, since) == Counter({200: 2, 503: 1, 499: 1})
    assert servers.access_lines(server, since)[-1] == b'127.0.0.1 "GET" 499 0 5.001 proxy'
    assert servers.answers_by_status(server) == Counter({200: 2, 503: 2, 400: 1, 499: 1})
