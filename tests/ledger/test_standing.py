"""The receipt page says whether the receipt is verified and what was checked, with a link
to its proof; or that it is not in the log yet and how long that usually takes; or that it
no longer matches what was signed."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ledger import standing
from receipts.models import Receipt, SetAside
from tests.ledger.conftest import append

pytestmark = pytest.mark.django_db


@pytest.fixture
def logged(receipt_factory):
    sales = [receipt_factory(token=f"rcpt_standing{i:02d}_aaaa", short_code=f"STND{i:02d}") for i in range(4)]
    append()
    return sales


def _page(client, receipt) -> str:
    response = client.get(f"/app/receipt/{receipt.token}")
    assert response.status_code == 200
    return response.content.decode()


def test_a_logged_receipt_is_verified_and_links_to_its_proof(logged, client, keys):
    page = _page(client, logged[2])
    assert '<h2 id="log-title">Verified receipt</h2>' in page
    # Plain words first; the key, the entry and the proof behind "Technical details".
    assert (
        '<p class="plain">This receipt is genuine: it is exactly what the shop\'s till sent when it was issued, '
        "and Receco keeps it in a public record of receipts that nobody can change.</p>"
    ) in page
    assert page.index('<p class="plain">') < page.index("<summary>Technical details</summary>") < page.index("Ed25519")
    assert f'signed by this service\'s key <span class="code key-id">{keys.kid[:8]}</span>' in page
    assert "entry 2 of the public receipt log, in its signed checkpoint of 4 entries" in page
    assert f'<a href="/log/proof/{logged[2].token}">See the proof</a>' in page
    assert client.get(f"/log/proof/{logged[2].token}").status_code == 200


def test_a_receipt_not_yet_logged_says_how_long_it_usually_takes(logged, receipt_factory, client, settings):
    fresh = receipt_factory(token="rcpt_standingnew_aaa", short_code="STNDNW")
    page = _page(client, fresh)
    wait = settings.RECECO_LOG_COMMIT_LAG + settings.RECECO_LOG_CHECKPOINT_INTERVAL
    assert '<h2 id="log-title">Being verified</h2>' in page
    assert f"a receipt usually enters it within {wait} seconds of the sale" in page
    assert "/log/proof/" not in page


def test_a_receipt_changed_after_it_was_signed_is_not_verified(logged, client):
    Receipt.objects.filter(id=logged[1].id).update(total_amount=1)
    page = _page(client, Receipt.objects.get(id=logged[1].id))
    assert '<h2 id="log-title">Not verified</h2>' in page
    assert "This receipt no longer matches what the shop's till sent when it was issued: it was changed since." in page
    assert "It differs from what was signed as entry 1 of the public receipt log." in page  # behind "Technical details"


def test_a_receipt_set_aside_is_still_verified(receipt_factory, client):
    receipt_factory(keyed=False, token="rcpt_standingaside_a", short_code="ASIDE1", total_amount=1)
    append()
    receipt_factory(keyed=True, token="rcpt_standingaside_a", short_code="ASIDE1")
    append()
    moved = SetAside.objects.get().receipt
    assert standing.standing(moved).state == standing.VERIFIED
    assert '<h2 id="log-title">Verified receipt</h2>' in _page(client, moved)


def test_with_signing_off_and_nothing_logged_the_page_says_nothing_of_it(receipt_factory, client, settings):
    from receco.lib import signingkeys

    settings.RECECO_SIGNING_KEYS = ""
    settings.RECECO_SIGNING_KEY_FILE = ""
    signingkeys.keyring.cache_clear()
    try:
        page = _page(client, receipt_factory(token="rcpt_standingoff_aaa", short_code="STNDOF"))
    finally:
        signingkeys.keyring.cache_clear()
    assert "log-title" not in page


def test_the_page_reads_the_log_once(logged, client):
    client.get(f"/app/receipt/{logged[0].token}")  # the latest checkpoint, read once a second per process
    with CaptureQueriesContext(connection) as queries:
        _page(client, logged[0])
    assert len([q for q in queries.captured_queries if "ledger_" in q["sql"]]) == 1
