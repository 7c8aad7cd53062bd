"""One customer's phone number and email address on receipts of two shops, sent to them
and told to each shop's webhook endpoint, as erasure finds them."""

import pytest

from receipts.creation import create_receipt
from receipts.validation import validate_sale
from webhooks.endpoints import create_endpoint

PHONE = "+2348031234567"
EMAIL = "Ada.Lovelace@example.com"  # as a POS sent it: erasure matches it in any case
OTHER_PHONE = "+2348059876543"
OTHER_EMAIL = "grace@example.org"


@pytest.fixture
def endpoints(merchant, other_merchant, receiver):
    """A webhook endpoint of each shop, for every event type, at ``receiver``."""
    return [create_endpoint(shop, receiver.url, description="Accounting") for shop in (merchant, other_merchant)]


@pytest.fixture
def sell(sent, sale):
    """Store a sale of ``shop`` with ``overrides``, keyed, its deliveries and events sent."""

    def make(shop, token, short_code, **overrides):
        fields = {"merchant_string_id": shop.string_id, "token": token, "short_code": short_code}
        data = validate_sale({**sale, **fields, **overrides})
        return sent(create_receipt, shop, data, keyed=True).receipt

    return make


@pytest.fixture
def customer_receipts(sell, merchant, other_merchant, endpoints):
    """Two receipts of two shops sent to PHONE and EMAIL, and one to someone else."""
    ours = [
        sell(merchant, "rcpt_customer01_aaaaa", "CUSTA1", customer_phone=PHONE, customer_email=EMAIL),
        sell(other_merchant, "rcpt_customer02_aaaaa", "CUSTB2", customer_phone=PHONE),
    ]
    theirs = sell(merchant, "rcpt_someone_else_aa", "OTHER3", customer_phone=OTHER_PHONE, customer_email=OTHER_EMAIL)
    return ours, theirs


def followed(short_link: str) -> str:
    """Where a text message's short link leads (the page's path and its key)."""
    from django.test import Client

    response = Client().get(short_link.removeprefix("https://receipts.example.test"))
    assert response.status_code == 302
    return response["Location"]


def variants(*contacts: str) -> set[str]:
    """Each contact and the forms that would still give it away: a number without its
    "+", in national form and without its country code; an address's local part."""
    found = set()
    for contact in contacts:
        found.add(contact)
        found.add(contact.lower())
        if "@" in contact:
            found.add(contact.partition("@")[0].lower())
        if contact.startswith("+234"):
            found.update({contact[1:], "0" + contact[4:], contact[4:]})
    return found


def database_dump() -> str:
    """Every row of every table, as ``manage.py dumpdata`` writes them."""
    import io

    from django.core.management import call_command

    out = io.StringIO()
    call_command("dumpdata", stdout=out)
    return out.getvalue()


def cache_dump() -> str:
    """Every key of the shared cache under this run's prefix, with its value: Redis when
    the suite runs on it, else this process's local memory."""
    from django.conf import settings
    from django.core.cache import cache

    from receco.lib import sharedcache

    client = sharedcache.redis_client()
    if client is None:
        # Django's local-memory cache has no public way to list its keys, and this check
        # must see every one: its own dict, read, never written.
        return "\n".join(f"{key} {value!r}" for key, value in cache._cache.items())  # noqa: SLF001
    read = {
        b"string": client.get,
        b"hash": client.hgetall,
        b"list": lambda key: client.lrange(key, 0, -1),
        b"set": client.smembers,
        b"zset": lambda key: client.zrange(key, 0, -1, withscores=True),
    }
    lines = []
    for key in client.scan_iter(match=f"{settings.RECECO_CACHE_PREFIX}*", count=1000):
        lines.append(f"{key!r} {read.get(client.type(key), lambda _key: '?')(key)!r}")
    return "\n".join(lines)
