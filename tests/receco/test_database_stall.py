"""A stalled database fails requests fast and leaves the workers free (DATABASE_CONNECT_TIMEOUT,
DATABASE_STATEMENT_TIMEOUT): replays the review's paused PostgreSQL, on a server of the
test's own (tests.postgres_cluster), served by a real gunicorn worker."""

import json
import urllib.error
import urllib.parse
import urllib.request

import psycopg
import pytest

from tests.servers import start_gunicorn

pytestmark = pytest.mark.postgres

DATABASE = "receco_stall"  # on the suite's own PostgreSQL server (private_cluster)

SALE = {
    "token": "rcpt_stall0001_aaaaaa",
    "merchant_string_id": "test-stall",
    "total_amount": 2500,
    "items": [{"name": "Tea", "quantity": 1, "unit_price": 2500, "total_price": 2500}],
}


@pytest.fixture(scope="module")
def stack(private_cluster, tmp_path_factory):
    server = start_gunicorn(
        private_cluster.migrated_database(DATABASE),
        tmp_path_factory.mktemp("stall") / "gunicorn.log",
        DATABASE_STATEMENT_TIMEOUT="2",
        DATABASE_CONNECT_TIMEOUT="2",
    )
    try:
        yield private_cluster, server
    finally:
        server.stop()


def _call(server, path: str, body: dict | None = None) -> tuple[int, dict, bytes]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{server.url}{path}", data=data, headers={"Content-Type": "application/json"})
    try:
        # Longer than the deadlines, shorter than gunicorn's 30 s worker timeout: a
        # request that hangs fails the test here.
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def _get_receipt(server, token: str):
    query = urllib.parse.urlencode({"input": json.dumps({"token": token})})
    return _call(server, f"/api/trpc/getReceipt?{query}")


UNAVAILABLE = {
    "error": {
        "message": "The database is not answering; try again in a few seconds",
        "code": -32603,
        "data": {"code": "SERVICE_UNAVAILABLE", "httpStatus": 503, "path": "getReceipt"},
    }
}


def test_a_paused_database_answers_503_at_once_and_recovers(stack):
    cluster, server = stack
    assert _call(server, "/api/trpc/createReceiptFromPOS", SALE)[0] == 200
    assert _get_receipt(server, SALE["token"])[0] == 200  # the worker holds a warm connection
    cluster.pause()
    try:
        # The connection in hand: the server never answers, the client cuts it off.
        status, headers, body = _get_receipt(server, SALE["token"])
        assert (status, json.loads(body)) == (503, UNAVAILABLE), body
        assert headers["Retry-After"] == "5"
        # A new connection: the server accepts in the kernel and never answers the login.
        status, _, body = _get_receipt(server, SALE["token"])
        assert (status, json.loads(body)) == (503, UNAVAILABLE)
        # A page says so in words.
        status, headers, body = _call(server, f"/app/receipt/{SALE['token']}")
        assert status == 503, body[-3000:]
        assert headers["Retry-After"] == "5"
        assert b"Back in a moment" in body
    finally:
        cluster.resume()
    assert _get_receipt(server, SALE["token"])[0] == 200


def test_a_statement_stuck_behind_a_lock_ends_at_the_statement_timeout(stack):
    cluster, server = stack
    _call(server, "/api/trpc/createReceiptFromPOS", SALE)
    with psycopg.connect(cluster.url(DATABASE)) as blocker:
        blocker.execute("LOCK TABLE receipts_receipt IN ACCESS EXCLUSIVE MODE")
        status, headers, body = _get_receipt(server, SALE["token"])
        assert (status, json.loads(body)) == (503, UNAVAILABLE)
    assert _get_receipt(server, SALE["token"])[0] == 200


def test_a_new_connection_has_the_statement_timeout(db):
    from django.db import connection

    fresh = connection.copy()  # the suite's own ran migrate, which lifts it
    try:
        with fresh.cursor() as cursor:
            cursor.execute("SHOW statement_timeout")
            assert cursor.fetchone()[0] == "10s"
    finally:
        fresh.close()


def test_migrate_is_not_held_to_the_statement_timeout(transactional_db):
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] == "0"
