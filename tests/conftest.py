import json
import urllib.request

import pytest

from merchants.models import Merchant

# Which of CI's passes runs each test, and the xdist groups (CONTRIBUTING.md).
pytest_plugins = ["tests.passes"]


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, tmp_path_factory):
    """On SQLite the test database is a file, as a deployment's is, not Django's default
    in-memory one. An in-memory database forces the live server to hand the test's one
    connection to all its request threads, so concurrent requests (the agent's batched
    drain sends four at once) interleave their transactions on it, which no real server
    does: each thread then has its own connection, as under gunicorn."""
    from django.conf import settings

    default = settings.DATABASES["default"]
    if default["ENGINE"] == "django.db.backends.sqlite3":
        default.setdefault("TEST", {})["NAME"] = str(tmp_path_factory.mktemp("database") / "test.sqlite3")


class Api:
    """Calls procedures the way the public SDKs do and returns (status, decoded JSON)."""

    def __init__(self, client):
        self.client = client

    def get(self, path: str, input=None, raw_input: str | None = None, **headers):
        params = {}
        if raw_input is not None:
            params["input"] = raw_input
        elif input is not None:
            params["input"] = json.dumps(input)
        response = self.client.get(f"/api/trpc/{path}", params, headers=headers)
        return response.status_code, json.loads(response.content)

    def post(self, path: str, body=None, raw_body: str | bytes | None = None, **headers):
        data = raw_body if raw_body is not None else json.dumps(body) if body is not None else ""
        response = self.client.post(f"/api/trpc/{path}", data, content_type="application/json", headers=headers)
        return response.status_code, json.loads(response.content)

    def request(self, method: str, path: str, **kwargs):
        return getattr(self.client, method.lower())(f"/api/trpc/{path}", **kwargs)


@pytest.fixture
def api(client):
    return Api(client)


@pytest.fixture
def merchant(db):
    """A registered merchant whose owner switched "require API key" off, so that its POS
    may call without a key as the specification allows (tests of the key requirement
    switch it on)."""
    return Merchant.objects.create(
        string_id="mama-put",
        name="Mama Put Kitchen",
        logo_url="https://cdn.example.com/mama-put.png",
        accent_color="#c2410c",
        require_api_key=False,
    )


@pytest.fixture
def other_merchant(db):
    """A registered merchant that requires its API key, as registered merchants do by default."""
    return Merchant.objects.create(string_id="corner-shop", name="Corner Shop")


@pytest.fixture
def sale(merchant):
    """A createReceiptFromPOS body as the public SDKs send it."""
    return {
        "token": "rcpt_mfx3k2a1_q8z0lp",
        "short_code": "K7P2QX",
        "merchant_string_id": merchant.string_id,
        "merchant_name": "Mama Put Kitchen",
        "merchant_logo": None,
        "accent_color": None,
        "total_amount": 130000,
        "currency": "NGN",
        "transaction_date": "2026-11-22T10:15:00.000Z",
        "items": [
            {"name": "Jollof rice", "quantity": 2, "unit_price": 50000, "total_price": 100000},
            {"name": "Chapman", "quantity": 1, "unit_price": 30000, "total_price": 30000},
        ],
        "category": "restaurant",
        "payment_method": "card",
        "location": "Lekki Phase 1",
        "status": "completed",
        "customer_email": None,
        "customer_phone": None,
    }


@pytest.fixture
def receipt_factory(merchant, sale):
    """Store receipts of ``merchant`` with the given overrides of the ``sale`` fixture, as
    its POS would with its API key (``keyed=False``: as a call without the key would)."""
    from receipts.creation import create_receipt
    from receipts.validation import validate_sale

    def make(keyed=True, **overrides):
        return create_receipt(merchant, validate_sale({**sale, **overrides}), keyed=keyed).receipt

    return make


@pytest.fixture
def receipt(receipt_factory):
    return receipt_factory()


@pytest.fixture
def test_receipt(merchant, sale):
    """A test receipt (made with a test key or for a test- merchant): livemode False."""
    from receipts.creation import create_receipt
    from receipts.validation import validate_sale

    data = validate_sale({**sale, "token": "rcpt_testmode_000001", "short_code": "TSTTST"})
    return create_receipt(merchant, data, livemode=False).receipt


@pytest.fixture
def stored(receipt_factory):
    """A stored receipt of ``merchant``, looked up as STORE1 or rcpt_stored01_aaaaaa."""
    return receipt_factory(token="rcpt_stored01_aaaaaa", short_code="STORE1")


# --- Merchants, API keys and rate limits (issue 3) ---


def _clear_test_cache():
    """Empty the caches between tests: counters must not leak from one to the next.

    Local memory is this process's own. In Redis only the keys under this run's prefix
    (tests/settings.py) are deleted, never the whole database.
    """
    from django.core.cache import cache

    from merchants.admission.store import MemoryStore, store
    from receco.lib import sharedcache

    client = sharedcache.redis_client()
    if client is None:
        cache.clear()
        current = store()
        assert isinstance(current, MemoryStore)
        current.clear()
        return
    names = list(client.scan_iter(match=sharedcache.key("*"), count=1000))
    if names:
        client.delete(*names)


@pytest.fixture(autouse=True)
def _isolated_cache():
    """Each test starts with empty caches and nothing this process remembers of keys and
    merchants (merchants.admission.memory)."""
    from merchants.admission import memory
    from receco.lib import sharedcache

    def forget():
        sharedcache.reset()
        memory.forget()
        _clear_test_cache()

    forget()
    yield
    forget()


@pytest.fixture(autouse=True)
def _no_task_pending():
    """Each test starts as a new process would: no dispatcher or appender of its own queued
    yet (receco.lib.wakeups)."""
    from receco.lib import wakeups

    wakeups.forget_all()
    yield
    wakeups.forget_all()


@pytest.fixture(autouse=True)
def _sms_outbox_empty(settings):
    """Texts go to a module list, like mail.outbox (Django's tests send email to
    locmem the same way): each test starts with it empty."""
    from messaging import sms

    sms.outbox.clear()
    settings.RECECO_SMS_BACKEND = "locmem"


@pytest.fixture
def sent(django_capture_on_commit_callbacks):
    """Run ``change`` and the tasks it queues (the immediate backend runs them at commit)."""

    def run(change, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return change(*args, **kwargs)

    return run


@pytest.fixture
def local_receivers(settings):
    """The webhook receivers of tests listen on 127.0.0.1 over http: both allowed."""
    settings.RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST = True
    settings.RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = True


@pytest.fixture
def receiver(local_receivers):
    """A merchant's webhook receiver on localhost that answers at once (tests.receivers)."""
    from tests.receivers import Receiver

    running = Receiver()
    yield running
    running.close()


@pytest.fixture
def test_key(merchant):
    """A test key of ``merchant`` (an IssuedKey: ``.key`` is the full key, ``.api_key`` the record)."""
    from merchants.keys import issue_key

    return issue_key(merchant, "test", "Laptop")


@pytest.fixture
def live_key(merchant):
    from merchants.keys import issue_key

    return issue_key(merchant, "live", "Till 1")


@pytest.fixture
def other_live_key(other_merchant):
    from merchants.keys import issue_key

    return issue_key(other_merchant, "live", "Their till")


def _staff(username: str, merchant=None, role: str = "member"):
    from django.contrib.auth.models import User

    from merchants.models import MerchantMembership

    user = User.objects.create_user(username, password="not-used-in-tests", is_staff=True)
    if merchant is not None:
        MerchantMembership.objects.create(user=user, merchant=merchant, role=role)
    return user


@pytest.fixture
def owner(merchant):
    """A staff user who owns ``merchant``: manages its settings and keys."""
    return _staff("olu", merchant, "owner")


@pytest.fixture
def member(merchant):
    """A staff user who is a member of ``merchant``: looks, changes nothing."""
    return _staff("mia", merchant, "member")


@pytest.fixture
def outsider(other_merchant):
    """A staff user who owns ``other_merchant`` and nothing of ``merchant``."""
    return _staff("otto", other_merchant, "owner")


@pytest.fixture
def superuser(db):
    from django.contrib.auth.models import User

    return User.objects.create_superuser("root", password="not-used-in-tests")


@pytest.fixture(scope="session", autouse=True)
def _database_copies(tmp_path_factory):
    """The migrated templates the databases of test servers are copied from (tests.databases):
    made once a session, on first use; the copies made on PostgreSQL dropped at its end."""
    from tests import databases

    databases.start_session(tmp_path_factory.mktemp("templates"))
    yield
    databases.end_session()


@pytest.fixture
def server_database(tmp_path) -> str:
    """The URL of a migrated database of the suite's kind for the processes a test starts
    (gunicorn, the task worker, management commands): a copy of the session's template, a
    file in ``tmp_path`` on SQLite, a database of its own on PostgreSQL."""
    from tests import databases

    return databases.fresh(tmp_path)


@pytest.fixture(scope="session")
def served(tmp_path_factory):
    """The project served by a real gunicorn with gunicorn.conf.py, on a migrated database
    of its own of the suite's kind (and its Redis, when it has one): for raw HTTP that
    Django's test client cannot send. One for the session: the tests that share it keep
    their data apart (merchants and tokens of their own), and its cache keys are under a
    prefix of their own."""
    from tests import databases
    from tests.servers import forget_cache_prefix, start_gunicorn

    folder = tmp_path_factory.mktemp("served")
    server = start_gunicorn(databases.fresh(folder, "served"), folder / "gunicorn.log")
    # Until its worker has loaded the project: the first test's raw request (10 s) must
    # not pay the worker's start, which a busy machine made longer (a 'timed out').
    urllib.request.urlopen(f"{server.url}/healthz", timeout=120).close()
    yield server
    server.stop()
    forget_cache_prefix()


@pytest.fixture(scope="session")
def private_cluster():
    """A PostgreSQL server of the suite's own (tests.postgres_cluster), for what must not be
    done to the machine's shared one (pausing it, replicating it): one a session, shared by
    the modules that need one, each on a database of its own (``migrated_database``)."""
    from tests.postgres_cluster import start_cluster

    cluster = start_cluster()
    yield cluster
    cluster.stop()
