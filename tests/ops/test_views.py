"""Who may read /metrics (receco.ops.views.metrics_view)."""

import pytest

pytestmark = pytest.mark.django_db  # a scrape reads the task queue's depth

FORBIDDEN = {"error": "Metrics are served only to allowed addresses or with the metrics token"}


def test_metrics_are_not_there_unless_enabled(client):
    response = client.get("/metrics")
    assert response.status_code == 404


def test_an_allowed_address_reads_them(client, metrics_on):
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 200


def test_any_other_address_is_refused(client, metrics_on):
    response = client.get("/metrics", REMOTE_ADDR="203.0.113.9")
    assert response.status_code == 403
    assert response.json() == FORBIDDEN


def test_a_network_may_be_allowed(client, metrics_on, settings):
    settings.RECECO_METRICS_ALLOWED_IPS = ["10.0.0.0/8", "2001:db8::5"]
    assert client.get("/metrics", REMOTE_ADDR="10.20.30.40").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="2001:db8::5").status_code == 200
    # Not another address of its /64: the allow list takes whole addresses.
    assert client.get("/metrics", REMOTE_ADDR="2001:db8::6").status_code == 403
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 403


def test_behind_a_proxy_the_address_it_saw_counts(client, metrics_on, settings):
    settings.RECECO_TRUSTED_PROXY_COUNT = 1
    forwarded = {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "203.0.113.9"}
    assert client.get("/metrics", **forwarded).status_code == 403
    settings.RECECO_METRICS_ALLOWED_IPS = ["203.0.113.9"]
    assert client.get("/metrics", **forwarded).status_code == 200


def test_a_forged_forwarded_header_is_ignored_without_a_trusted_proxy(client, metrics_on):
    response = client.get("/metrics", REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR="127.0.0.1")
    assert response.status_code == 403


@pytest.mark.parametrize(
    ("authorization", "status"),
    [
        ("Bearer s3cret-metrics-token-0123456789", 200),
        ("Bearer s3cret-metrics-token-012345678", 403),
        ("s3cret-metrics-token-0123456789", 403),
        ("", 403),
    ],
)
def test_the_token_opens_them_from_anywhere(client, metrics_on, settings, authorization, status):
    settings.RECECO_METRICS_TOKEN = "s3cret-metrics-token-0123456789"
    response = client.get("/metrics", REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION=authorization)
    assert response.status_code == status


def test_without_a_token_set_no_bearer_opens_them(client, metrics_on):
    response = client.get("/metrics", REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION="Bearer ")
    assert response.status_code == 403


def test_metrics_answer_whatever_the_host(client, metrics_on):
    assert client.get("/metrics", headers={"host": "10.1.2.3:8000"}).status_code == 200
