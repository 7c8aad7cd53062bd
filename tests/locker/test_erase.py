"""'Erase my number from all receipts': from the locker, through privacy.erasure, with the
locker's own sign-ins, sessions and counters erased with it."""

import hashlib

import pytest
from django.test import Client

from locker import limits
from locker.contacts import SMS, Contact
from locker.models import Session, SignIn
from merchants.admission.store import store
from privacy.models import ErasureRecord
from receco.lib import sharedcache
from receipts.models import Receipt
from tests.locker.conftest import OTHER_PHONE, PHONE, ask

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_devices(client, two_shops, signed_in):
    laptop = Client()
    signed_in(client)
    signed_in(laptop)
    return client, laptop


def test_the_page_says_what_erasing_does(two_devices):
    phone, _ = two_devices
    response = phone.get("/app/my/erase")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<h1>Erase your number from all receipts</h1>" in html
    assert "We remove <strong>+234*******67</strong> from all 2 receipts shops sent to it" in html
    assert "The receipts themselves stay, without your number" in html
    assert 'to keep a copy, <a href="/app/my#download-title">download all your receipts</a> first.' in html
    assert Receipt.objects.filter(customer_phone=PHONE).count() == 2  # nothing done yet


def test_the_list_offers_it(two_devices):
    phone, _ = two_devices
    assert 'href="/app/my/erase">Erase my number from all receipts</a>' in phone.get("/app/my").content.decode()


def test_erasing_removes_the_number_and_ends_every_session(two_devices, two_shops):
    phone, laptop = two_devices
    response = phone.post("/app/my/erase")
    assert response.status_code == 302
    assert response["Location"] == "/app/my"
    page = phone.get("/app/my").content.decode()
    assert "+234*******67 is erased from all your receipts. You are signed out on every device." in page
    assert "Mobile number or email address" in page
    assert "Sign out everywhere" not in laptop.get("/app/my").content.decode()
    # The receipts stay, without the number; someone else's keep theirs.
    assert (
        Receipt.objects.filter(pk__in=[two_shops["mama"].pk, two_shops["corner"].pk], customer_phone=None).count() == 2
    )
    assert Receipt.objects.get(pk=two_shops["not_theirs"].pk).customer_phone == OTHER_PHONE
    assert not Session.objects.exists()
    assert not SignIn.objects.filter(contact=PHONE).exists()
    record = ErasureRecord.objects.get()
    # The two sessions, and the two counters of the codes asked for it (an hour's, a day's).
    assert (record.via, record.kind, record.counts["receipts"], record.counts["locker"]) == ("locker", "phone", 2, 4)


def test_after_erasing_the_number_signs_in_to_nothing(two_devices, django_capture_on_commit_callbacks):
    phone, _ = two_devices
    phone.post("/app/my/erase")
    with django_capture_on_commit_callbacks(execute=True):
        assert ask(phone, PHONE).status_code == 302
    from locker import signins

    own_code = signins.code_of(SignIn.objects.get())
    refused = phone.post("/app/my/code", {"code": own_code})
    assert refused.context["form"].errors["code"] == ["That code is not right. 4 tries left."]


def test_erasing_needs_a_session_and_its_csrf_token(two_shops, two_devices):
    assert Client().post("/app/my/erase").status_code == 302
    assert Client().get("/app/my/erase")["Location"] == "/app/my"
    assert Client(enforce_csrf_checks=True).post("/app/my/erase").status_code == 403
    assert Receipt.objects.filter(customer_phone=PHONE).count() == 2


def _counters_named_by(contact: Contact) -> list[str]:
    """The names of the contact's counters in the shared cache (locker.limits): its codes
    and links asked for, its downloads, in each window of now."""
    from merchants.admission import limits as admission

    names = []
    for group, setting in (
        (limits.CONTACT, "RECECO_LOCKER_CONTACT_RATE"),
        (limits.EXPORT, "RECECO_LOCKER_EXPORT_RATE"),
    ):
        windows = admission.windows(group, contact.digest, admission.rates(setting), admission.clock())
        names += [window.count.name for window in windows]
    return names


def test_erasing_deletes_the_counters_named_by_the_contact(two_devices):
    """After an erasure, the counters named by the contact's keyed digest stayed in the
    shared cache for up to a day."""
    phone, _ = two_devices
    assert phone.post("/app/my/download").status_code == 200
    named = _counters_named_by(Contact(SMS, PHONE))
    assert len(store().get_many(named)) == 4  # codes: an hour's, a day's; downloads: the same
    phone.post("/app/my/erase")
    assert store().get_many(named) == {}


@pytest.mark.redis
def test_in_redis_nothing_named_by_the_contact_is_left(two_devices):
    phone, _ = two_devices
    phone.post("/app/my/download")
    client = sharedcache.redis_client()
    # admission's names hold the SHA-256 of who is counted: here, the contact's keyed digest.
    mark = hashlib.sha256(Contact(SMS, PHONE).digest.encode()).hexdigest()[:24]

    def named() -> list[bytes]:
        return [name for name in client.scan_iter(match=sharedcache.key("*"), count=1000) if mark.encode() in name]

    assert len(named()) == 4
    phone.post("/app/my/erase")
    assert named() == []
