import pytest
from django.db.migrations.recorder import MigrationRecorder
from django.test import override_settings

from receco.lib import sharedcache
from receco.lib.signingkeys import keyring
from tests.servers import free_port

LOG_NOT_VERIFIED = "not verified yet (manage.py verifylog)"


def test_healthz_answers_without_the_database(client):
    response = client.get("/healthz")  # no django_db mark: a query would fail the test
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_is_ready_when_everything_answers(client):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ready",
        "details": {"log": LOG_NOT_VERIFIED, "signing": f"on: key {keyring().kid}"},
    }


@pytest.mark.django_db
def test_readyz_says_signing_is_off_without_a_key_and_stays_ready(client):
    keyring.cache_clear()
    try:
        with override_settings(RECECO_SIGNING_KEYS="", RECECO_SIGNING_KEY_FILE=""):
            response = client.get("/readyz")
    finally:
        keyring.cache_clear()
    assert response.status_code == 200
    assert response.json() == {
        "status": "ready",
        "details": {
            "log": LOG_NOT_VERIFIED,
            "signing": "off: no signing key configured (RECECO_SIGNING_KEYS or RECECO_SIGNING_KEY_FILE)",
        },
    }


@pytest.mark.django_db
def test_readyz_names_a_pending_migration(client):
    latest = MigrationRecorder.Migration.objects.filter(app="receipts").order_by("-id").first()
    latest.delete()  # as if the code was deployed before `migrate` ran (undone with the test's transaction)
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "reason": f"1 migration(s) not applied: receipts.{latest.name}",
        "problems": {"migrations": f"1 migration(s) not applied: receipts.{latest.name}"},
        "details": {"log": LOG_NOT_VERIFIED, "signing": f"on: key {keyring().kid}"},
    }


@pytest.mark.django_db
def test_readyz_says_redis_does_not_answer(client):
    closed = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    with override_settings(REDIS_URL=closed):
        response = client.get("/readyz")
    sharedcache.reset()
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "reason": "Redis did not answer",
        "problems": {"redis": "Redis did not answer"},
        "details": {"log": LOG_NOT_VERIFIED, "signing": f"on: key {keyring().kid}"},
    }


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_probes_answer_whatever_the_host(client, path):
    response = client.get(path, headers={"host": "10.1.2.3:8000"})  # a load balancer probing by address
    assert response.status_code == 200


def test_a_page_still_checks_the_host(client):
    response = client.get("/app/scan", headers={"host": "10.1.2.3:8000"})
    assert response.status_code == 400
