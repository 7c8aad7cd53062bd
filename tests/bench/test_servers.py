"""What a served project said (bench/servers.py): its answers by status are read from its
access log, and the requests it shed from its error log."""

from collections import Counter

from bench import servers


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


def test_the_requests_shed_are_read_from_its_error_log(tmp_path):
    """A request shed is answered before a worker serves it: no access line, only the
    worker's error-log lines say how many."""
    errors = (
        b"[2026-11-26 13:50:01 +0000] [7] [WARNING] Busy: answered 503 to 1 request(s) that waited over 5 s\n"
        b"[2026-11-26 13:50:02 +0000] [8] [WARNING] Busy: answered 503 to 41 request(s) that waited over 5 s\n"
    )
    assert servers.answers_by_status(_server(tmp_path, ACCESS, errors)) == Counter({200: 2, 503: 43})
