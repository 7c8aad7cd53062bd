import pytest
from prometheus_client.parser import text_string_to_metric_families

OPERATIONS = "receco.ops.middleware.OperationsMiddleware"
METRICS = "receco.ops.middleware.MetricsMiddleware"


@pytest.fixture
def metrics_on(settings):
    """RECECO_METRICS=1, as settings.py would then have it: the metrics middleware second."""
    settings.RECECO_METRICS = True
    assert settings.MIDDLEWARE[0] == OPERATIONS
    settings.MIDDLEWARE = [OPERATIONS, METRICS, *settings.MIDDLEWARE[1:]]


def samples(text: str) -> dict[tuple, float]:
    """A scrape's samples by (name, sorted label pairs)."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


@pytest.fixture
def scrape(client):
    """Read /metrics as an allowed address does; returns its samples."""

    def read() -> dict[tuple, float]:
        response = client.get("/metrics")
        assert response.status_code == 200, response.content
        return samples(response.content.decode())

    return read
