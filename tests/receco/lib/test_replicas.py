"""Read replicas (DATABASE_REPLICA_URLS): getReceipt and the receipt pages read a real
streaming replica, made here with pg_basebackup from a PostgreSQL server of the test's
own, and still find what was just created while the replica lags (read-your-writes);
a replica that is down leaves the reads to the primary."""

import http.cookiejar
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request

import psycopg
import pytest

from tests.postgres_cluster import start_replica
from tests.servers import manage, start_gunicorn

pytestmark = pytest.mark.postgres

DATABASE = "receco_replicas"  # on the suite's own PostgreSQL server (private_cluster)


def _sale(token: str, short_code: str) -> dict:
    return {
        "token": token,
        "short_code": short_code,
        "merchant_string_id": "test-replica-shop",
        "merchant_name": "Replica Shop",
        "total_amount": 2500,
        "currency": "NGN",
        "items": [{"name": "Tea", "quantity": 1, "unit_price": 2500, "total_price": 2500}],
    }


@pytest.fixture(scope="module")
def stack(private_cluster, tmp_path_factory):
    primary = private_cluster
    replica = None
    server = None
    try:
        url = primary.migrated_database(DATABASE)
        replica = start_replica(primary)
        server = start_gunicorn(
            url, tmp_path_factory.mktemp("replicas") / "gunicorn.log", DATABASE_REPLICA_URLS=replica.url(DATABASE)
        )
        yield primary, replica, server
    finally:
        if server is not None:
            server.stop()
        if replica is not None:
            replica.stop()


def _call(server, path: str, body: dict | None = None, key: str | None = None) -> tuple[int, bytes]:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
    request = urllib.request.Request(f"{server.url}{path}", data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _get_receipt(server, reference: str) -> tuple[int, dict]:
    query = urllib.parse.urlencode({"input": json.dumps({"token": reference})})
    status, body = _call(server, f"/api/trpc/getReceipt?{query}")
    return status, json.loads(body)


def _create(server, token: str, short_code: str) -> None:
    status, body = _call(server, "/api/trpc/createReceiptFromPOS", _sale(token, short_code))
    assert status == 200, body


def _manage(database_url: str, *args: str) -> str:
    return manage(database_url, *args).stdout


def _replay(replica, paused: bool) -> None:
    with psycopg.connect(replica.url(), autocommit=True) as connection:
        connection.execute("SELECT pg_wal_replay_pause()" if paused else "SELECT pg_wal_replay_resume()")


def _caught_up(primary, replica) -> None:
    """Wait until the replica has replayed everything the primary has written."""
    with psycopg.connect(primary.url(), autocommit=True) as connection:
        target = connection.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
    deadline = time.monotonic() + 30
    with psycopg.connect(replica.url(), autocommit=True) as connection:
        while True:
            replayed = connection.execute(
                "SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), %s) >= 0", (target,)
            ).fetchone()[0]
            if replayed:
                return
            assert time.monotonic() < deadline, "the replica did not catch up in 30 s"
            time.sleep(0.05)


def test_a_receipt_read_right_after_its_creation_is_found_while_the_replica_lags(stack):
    primary, replica, server = stack
    _replay(replica, paused=True)
    try:
        _create(server, "rcpt_replica01_aaaaaa", "REPL01")
        status, body = _get_receipt(server, "rcpt_replica01_aaaaaa")
        assert status == 200
        assert body["result"]["data"]["short_code"] == "REPL01"
        assert _get_receipt(server, "REPL01")[0] == 200
        page_status, page = _call(server, "/app/receipt/rcpt_replica01_aaaaaa")
        assert page_status == 200
        assert b"REPL01" in page
    finally:
        _replay(replica, paused=False)


def test_reads_are_served_by_the_replica(stack):
    """What the replica has not replayed yet is not what getReceipt shows, once the
    receipt itself is there: the read was the replica's."""
    primary, replica, server = stack
    _create(server, "rcpt_replica02_aaaaaa", "REPL02")
    _caught_up(primary, replica)
    _replay(replica, paused=True)
    try:
        with psycopg.connect(primary.url(DATABASE), autocommit=True) as connection:
            connection.execute("UPDATE receipts_receipt SET location = 'Moved' WHERE short_code = 'REPL02'")
        assert _get_receipt(server, "rcpt_replica02_aaaaaa")[1]["result"]["data"]["location"] is None
    finally:
        _replay(replica, paused=False)
    _caught_up(primary, replica)
    assert _get_receipt(server, "rcpt_replica02_aaaaaa")[1]["result"]["data"]["location"] == "Moved"


def test_a_contact_just_attached_is_read_back_while_the_replica_lags(stack):
    primary, replica, server = stack
    _create(server, "rcpt_replica06_aaaaaa", "REPL06")
    _caught_up(primary, replica)
    _replay(replica, paused=True)
    try:
        status, body = _call(
            server, "/api/trpc/updateReceiptContact", {"token": "rcpt_replica06_aaaaaa", "email": "ada@gmail.com"}
        )
        assert status == 200, body
        for reference in ("rcpt_replica06_aaaaaa", "REPL06"):
            assert _get_receipt(server, reference)[1]["result"]["data"]["customer_email"] == "a*******@gmail.com"
    finally:
        _replay(replica, paused=False)


def test_a_void_and_a_refund_are_read_back_while_the_replica_lags(stack):
    primary, replica, server = stack
    _create(server, "rcpt_replica07_aaaaaa", "REPL07")
    _create(server, "rcpt_replica08_aaaaaa", "REPL08")
    _caught_up(primary, replica)
    _replay(replica, paused=True)
    try:
        status, body = _call(server, "/api/trpc/voidReceipt", {"token": "rcpt_replica07_aaaaaa", "reason": "Mistake"})
        assert status == 200, body
        status, body = _call(server, "/api/trpc/refundReceipt", {"token": "REPL08", "amount": 500})
        assert status == 200, body
        assert _get_receipt(server, "REPL07")[1]["result"]["data"]["status"] == "voided"
        page_status, page = _call(server, "/app/receipt/rcpt_replica07_aaaaaa")
        assert page_status == 200
        assert b"Mistake" in page
        refunded = _get_receipt(server, "rcpt_replica08_aaaaaa")[1]["result"]["data"]
        assert (refunded["status"], len(refunded["refunds"])) == ("partially_refunded", 1)
    finally:
        _replay(replica, paused=False)


def test_a_forgery_set_aside_is_not_shown_while_the_replica_lags(stack):
    primary, replica, server = stack
    url = primary.url(DATABASE)
    _manage(url, "createmerchant", "replica-keyed", "--name", "Keyed Shop", "--no-require-api-key")
    key = _manage(url, "createapikey", "replica-keyed", "--type", "live").strip().splitlines()[-1]
    genuine = {**_sale("rcpt_replica09_aaaaaa", "REPL09"), "merchant_string_id": "replica-keyed"}
    forgery = {**genuine, "total_amount": 1, "items": [{"name": "x", "quantity": 1, "unit_price": 1, "total_price": 1}]}
    status, body = _call(server, "/api/trpc/createReceiptFromPOS", forgery)
    assert status == 200, body
    _caught_up(primary, replica)
    _replay(replica, paused=True)
    try:
        status, body = _call(server, "/api/trpc/createReceiptFromPOS", genuine, key=key)
        assert status == 200, body
        for reference in ("rcpt_replica09_aaaaaa", "REPL09"):
            assert _get_receipt(server, reference)[1]["result"]["data"]["total_amount"] == 2500
        page_status, page = _call(server, "/app/receipt/rcpt_replica09_aaaaaa")
        assert (page_status, b"25.00" in page) == (200, True)
    finally:
        _replay(replica, paused=False)


def test_the_pages_read_the_replica_too(stack):
    primary, replica, server = stack
    _create(server, "rcpt_replica03_aaaaaa", "REPL03")
    _caught_up(primary, replica)
    with psycopg.connect(primary.url(DATABASE), autocommit=True) as connection:
        connection.execute("UPDATE receipts_receipt SET location = 'Only on the primary' WHERE short_code = 'REPL03'")
    _replay(replica, paused=True)
    try:
        # The update above may or may not have been replayed before the pause; a second
        # one after it certainly has not.
        with psycopg.connect(primary.url(DATABASE), autocommit=True) as connection:
            connection.execute("UPDATE receipts_receipt SET location = 'Moved' WHERE short_code = 'REPL03'")
        status, page = _call(server, "/app/receipt/rcpt_replica03_aaaaaa")
        assert status == 200
        assert b"Moved" not in page
    finally:
        _replay(replica, paused=False)


def test_a_customer_who_sends_their_receipt_sees_it_sent_while_the_replica_lags(stack):
    primary, replica, server = stack
    _create(server, "rcpt_replica05_aaaaaa", "REPL05")
    _caught_up(primary, replica)
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    page_url = f"{server.url}/app/receipt/rcpt_replica05_aaaaaa"
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', browser.open(page_url).read().decode())[1]
    _replay(replica, paused=True)
    try:
        form = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "email": "ada@gmail.com"}).encode()
        with browser.open(f"{page_url}/send", data=form, timeout=20) as answer:  # follows the redirect
            assert answer.url == f"{page_url}#sent"
            page = answer.read().decode()
    finally:
        _replay(replica, paused=False)
    assert "Sent from this receipt at your request" in page
    assert "a*******@gmail.com" in page


def test_a_hung_replica_costs_one_short_wait_and_is_left_alone_until_it_answers(stack):
    """Issue 19.5: with the replica stopped (SIGSTOP), every read waited 12.2 s, went to
    the primary for 5 s, then stalled again."""
    primary, replica, server = stack
    _create(server, "rcpt_replica10_aaaaaa", "REPL10")
    _caught_up(primary, replica)
    assert _get_receipt(server, "REPL10")[0] == 200  # the worker holds a connection to the replica
    replica.pause()
    try:
        waits = []
        started = time.monotonic()
        while time.monotonic() - started < 12:  # past the old 5 s rest, twice
            before = time.monotonic()
            status, body = _get_receipt(server, "REPL10")
            waits.append(time.monotonic() - before)
            assert status == 200
            assert body["result"]["data"]["short_code"] == "REPL10"
            time.sleep(0.2)
        page_status = _call(server, "/app/receipt/rcpt_replica10_aaaaaa")[0]
    finally:
        replica.resume()
    assert page_status == 200
    # One wait of DATABASE_REPLICA_TIMEOUT (2 s) at most, then none: generous bounds, as
    # the machine may be busy; the old code waited 12.2 s, and again every 5 s.
    assert max(waits) < 6, waits
    assert len([wait for wait in waits if wait > 1.5]) <= 1, waits
    log = server.log.read_text()
    assert "read replica replica1 failed (OperationalError); reading from the primary until it answers again" in log
    deadline = time.monotonic() + 30
    while "read replica replica1 answers again; reading from it" not in server.log.read_text():
        assert time.monotonic() < deadline, "the replica was not probed back in 30 s"
        time.sleep(0.2)
    _caught_up(primary, replica)
    assert _get_receipt(server, "REPL10")[0] == 200


def test_a_replica_that_is_down_leaves_the_reads_to_the_primary(stack):
    primary, replica, server = stack
    _create(server, "rcpt_replica04_aaaaaa", "REPL04")
    replica.stop()
    for _ in range(3):
        status, body = _get_receipt(server, "rcpt_replica04_aaaaaa")
        assert status == 200
        assert body["result"]["data"]["short_code"] == "REPL04"
    assert _call(server, "/app/receipt/rcpt_replica04_aaaaaa")[0] == 200
    assert "read replica replica1 failed (OperationalError); reading from the primary until it answers again" in (
        server.log.read_text()
    )
