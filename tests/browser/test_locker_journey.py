"""Issue 23's whole journey in a real headless Chromium on a phone (360x740): two shops
send receipts to one number; the customer signs in with the texted code, sees both, adds
one to Apple Wallet (a pass this test's own certificate signs, checked by its manifest
and by ``openssl smime -verify``) and Google Wallet (a JWT checked with the public key),
downloads everything, and erases the number. Afterwards the database (pg_dump, or SQLite's
own dump), the cache under this run's prefix and every log line of the run hold the
number in none of its forms, and every receipt still verifies."""

import hashlib
import json
import logging
import os
import sqlite3
import subprocess
import zipfile

import jwt
import pytest
from django.core.management import call_command
from django.db import connection
from playwright.sync_api import expect
from receco_verify import orf as orf_file
from receco_verify.keys import load_jwks
from receco_verify.receipt import verify_bundle

from ledger import trust
from messaging import sms
from privacy.models import ErasureRecord
from receco.lib import signingkeys
from receipts.models import Receipt
from tests.browser.accessibility import Audit
from tests.browser.conftest import PHONE
from tests.browser.locker import NUMBER, sign_in_by_code
from tests.ledger.conftest import append
from tests.ops.test_log_privacy import every_line  # noqa: F401 (the fixture)
from tests.privacy.conftest import cache_dump, variants
from tests.receipts.wallet.support import openssl_verify
from webhooks.endpoints import create_endpoint

pytestmark = pytest.mark.django_db(transaction=True)

# Its forms that would give it away: E.164, without "+", national, without the country code.
FORMS = sorted(variants(NUMBER))


def database_dump() -> str:
    """Every table, every column of the test database as its own tool dumps it: pg_dump on
    PostgreSQL, Python's iterdump on SQLite."""
    settings = connection.settings_dict
    if connection.vendor == "postgresql":
        command = ["pg_dump", "--no-owner", "-h", settings["HOST"] or "127.0.0.1", "-p", str(settings["PORT"] or 5432)]
        command += ["-U", settings["USER"] or "postgres", settings["NAME"]]
        environment = {**os.environ, **({"PGPASSWORD": settings["PASSWORD"]} if settings["PASSWORD"] else {})}
        return subprocess.run(command, capture_output=True, text=True, check=True, env=environment, timeout=120).stdout
    with sqlite3.connect(settings["NAME"]) as database:
        return "\n".join(database.iterdump())


def _found(text: str) -> list[str]:
    return [form for form in FORMS if form in text]


@pytest.fixture
def two_shops(merchant, other_merchant, sale, receiver, local_receivers):
    """Each shop's sale to NUMBER, texted to it and told to the shop's webhook endpoint
    (whose stored body holds the number), a refund of one, and a receipt to someone else;
    then the appender runs."""
    from receipts.creation import create_receipt
    from receipts.refunds import refund, validate_refund
    from receipts.validation import validate_sale

    for shop in (merchant, other_merchant):
        create_endpoint(shop, receiver.url, description="Accounting")

    def make(shop, **overrides):
        data = {**sale, "merchant_string_id": shop.string_id, "merchant_name": shop.name, **overrides}
        return create_receipt(shop, validate_sale(data), keyed=True).receipt

    mama = make(merchant, token="rcpt_mama0001_aaaaaa", short_code="MAMA01", customer_phone=NUMBER,
                transaction_date="2026-11-20T12:00:00Z")  # fmt: skip
    made = refund(mama, validate_refund({"token": mama.token, "amount": 30000}), keyed=True).receipt
    corner = make(other_merchant, token="rcpt_corner01_aaaaaa", short_code="CORN01", customer_phone=NUMBER,
                  total_amount=45050, transaction_date="2026-11-22T09:30:00Z",
                  items=[{"name": "Bread", "quantity": 1, "unit_price": 45050, "total_price": 45050}])  # fmt: skip
    make(merchant, token="rcpt_others01_aaaaaa", short_code="OTHR01", customer_phone="+2348039999999")
    append()
    return mama, made, corner


GOOGLE_PAGE = "<!doctype html><title>Google Wallet</title><p>Saved to Google Wallet"


def _verified(document: dict, keys: dict) -> str:
    """The short code of an ORF file that receco-verify's checks pass: signature, trust,
    checkpoint, inclusion. Raises VerificationError otherwise."""
    bundle = orf_file.bundle_of(document)
    verify_bundle(bundle, keys)
    orf_file.check_trust(document)
    return bundle["content"]["short_code"]


def test_two_shops_one_number_sign_in_wallet_download_erase_and_nothing_left(
    every_line,  # noqa: F811 (first: every record from the first sale on)
    caplog,
    capfd,
    phone,
    live_server,
    wallets,
    two_shops,
    artifacts,
    tmp_path,
):
    caplog.set_level(logging.DEBUG)
    chain, google_key = wallets
    mama, made, corner = two_shops
    audit = Audit(phone.page, PHONE, artifacts)
    page, url = phone.page, live_server.url
    assert [m.to for m in sms.outbox] == [NUMBER, NUMBER, NUMBER, "+2348039999999"]  # both shops' texts, the refund's

    # Sign in with the texted code.
    audit.visit(f"{url}/app/my", "journey-signin")
    sign_in_by_code(page, url)
    entries = page.locator(".locker-list > li")
    expect(entries).to_have_count(2)
    expect(entries.nth(0)).to_contain_text("Corner Shop")
    expect(entries.nth(1)).to_contain_text("Mama Put Kitchen")
    expect(entries.nth(1).get_by_role("link", name="Refund of ₦300.00")).to_be_visible()
    audit.check("journey-list")

    # Add Mama Put's receipt to Apple Wallet: the pass's manifest and signature hold.
    entries.nth(1).get_by_role("link").first.click()
    page.wait_for_url(f"{url}/app/receipt/{mama.token}")
    audit.check("journey-receipt")
    with page.expect_download() as download:
        page.get_by_role("link", name="Add to Apple Wallet").click()
    download.value.save_as(tmp_path / "receipt.pkpass")
    with zipfile.ZipFile(tmp_path / "receipt.pkpass") as archive:
        archive.extractall(tmp_path / "pass")
        files = {name: archive.read(name) for name in archive.namelist()}
    manifest = json.loads(files["manifest.json"])
    assert set(manifest) == set(files) - {"manifest.json", "signature"}
    for name, digest in manifest.items():
        assert hashlib.sha1(files[name], usedforsecurity=False).hexdigest() == digest, name
    folder = tmp_path / "pass"
    result = openssl_verify(folder / "signature", folder / "manifest.json", chain.path("root.pem"))
    assert result.returncode == 0, result.stderr
    assert "Mama Put Kitchen" in files["pass.json"].decode()
    # And to Google Wallet: the save link's JWT is signed by the service account's key.
    # Google's page is stood in for, and reached before the next page is asked for: the
    # navigation to it, refused, ended on Chromium's error page, which could interrupt
    # the next one.
    page.route("https://pay.google.com/**", lambda route: route.fulfill(content_type="text/html", body=GOOGLE_PAGE))
    with page.expect_request(lambda request: request.url.startswith("https://pay.google.com/")) as request:
        page.get_by_role("link", name="Add to Google Wallet").click()
    page.wait_for_url("https://pay.google.com/**")
    token = request.value.url.removeprefix("https://pay.google.com/gp/v/save/")
    claims = jwt.decode(token, google_key.public_key(), algorithms=["RS256"], audience="google")
    assert claims["payload"]["genericObjects"][0]["cardTitle"]["defaultValue"]["value"] == "Mama Put Kitchen"
    assert _found(json.dumps(claims)) == []
    assert _found(b"".join(files.values()).decode("latin-1")) == []

    # Take everything: a zip of the three receipts' files, each verifying, and the CSV.
    page.goto(f"{url}/app/my")
    page.get_by_role("button", name="Download all my receipts").scroll_into_view_if_needed()
    audit.check("journey-download")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download all my receipts").click()
    assert download.value.suggested_filename.startswith("receco-receipts-")
    download.value.save_as(tmp_path / "receipts.zip")
    keys = load_jwks(signingkeys.keyring().jwks())
    with zipfile.ZipFile(tmp_path / "receipts.zip") as archive:
        names = archive.namelist()
        documents = [json.loads(archive.read(name)) for name in names if name.endswith(".orf.json")]
        table = archive.read("receipts.csv").decode("utf-8-sig")
        everything = b"".join(archive.read(name) for name in names).decode()
    assert len(names) == 4
    assert sorted(_verified(document, keys) for document in documents) == sorted(["MAMA01", "CORN01", made.short_code])
    assert [line.split(",")[3] for line in table.splitlines()[1:]] == [made.short_code, "CORN01", "MAMA01"]
    assert _found(everything) == []
    assert "OTHR01" not in everything

    # Erase the number from the locker (until then the dump finds it: on receipts,
    # deliveries, webhook bodies).
    assert NUMBER in database_dump()
    page.get_by_role("link", name="Erase my number from all receipts").click()
    page.wait_for_url(f"{url}/app/my/erase")
    audit.check("journey-erase")
    page.get_by_role("button", name="Erase my number").click()
    page.wait_for_url(f"{url}/app/my")
    expect(page.get_by_role("status")).to_have_text(
        "+234*******67 is erased from all your receipts. You are signed out on every device."
    )
    audit.check("journey-erased")
    audit.assert_clean()
    assert ErasureRecord.objects.filter(via="locker").count() == 1

    # Every receipt still verifies: the appender runs again, verifylog checks the whole
    # log, receco-verify each receipt's file as it is served now and as it was downloaded.
    append()
    printed = capfd.readouterr()
    call_command("verifylog")
    verifylog = capfd.readouterr()
    assert "checkpoints checked: no problem" in verifylog.out
    for receipt in Receipt.objects.select_related("merchant", "refund_of"):
        assert _verified(trust.document(receipt), keys) == receipt.short_code
    for document in documents:
        _verified(document, keys)

    # Nothing holds the number any more: not the database, not the cache, not the logs.
    assert _found(database_dump()) == []
    cached = cache_dump()
    assert cached, "the cache holds nothing: its dump is broken (the limits' counters are there)"
    assert _found(cached) == []
    rest = capfd.readouterr()
    assert every_line, "the run logged nothing: the log capture is broken"
    assert _found("\n".join(every_line)) == []
    assert _found(caplog.text) == []
    assert _found("\n".join(record.getMessage() for record in caplog.get_records("setup"))) == []
    assert _found("".join([*printed, *verifylog, *rest])) == []
