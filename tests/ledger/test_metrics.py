"""verifylog's outcome as metrics, read at scrape time from the database: the command runs
in a process of its own, which no scrape ever reaches."""

import pytest
from django.core.management import CommandError, call_command

from receipts.models import Receipt
from tests.ledger.conftest import append
from tests.ops.conftest import metrics_on, scrape  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


def _value(scraped: dict, name: str, **labels) -> float | None:
    return scraped.get((name, tuple(sorted(labels.items()))))


@pytest.fixture
def logged(receipt_factory):
    sales = [receipt_factory(token=f"rcpt_metered{i:02d}_aaaaa", short_code=f"METR{i:02d}") for i in range(3)]
    append()
    return sales


def test_before_any_verifylog_the_result_is_never(logged, metrics_on, scrape):  # noqa: F811
    scraped = scrape()
    assert _value(scraped, "receco_log_verified", result="never") == 1
    assert _value(scraped, "receco_log_verified", result="ok") == 0
    assert _value(scraped, "receco_log_verified", result="problems") == 0
    assert _value(scraped, "receco_log_verified_timestamp_seconds") is None
    assert _value(scraped, "receco_log_entries") == 3
    assert _value(scraped, "receco_log_checkpoint_entries") == 3
    assert _value(scraped, "receco_log_checkpoint_timestamp_seconds") > 0


def test_a_clean_verifylog_is_ok_with_its_time(logged, metrics_on, scrape):  # noqa: F811
    call_command("verifylog")
    scraped = scrape()
    assert _value(scraped, "receco_log_verified", result="ok") == 1
    assert _value(scraped, "receco_log_verified", result="never") == 0
    assert _value(scraped, "receco_log_problems") == 0
    assert _value(scraped, "receco_log_verified_entries") == 3
    assert _value(scraped, "receco_log_verified_timestamp_seconds") > 0


def test_problems_found_are_counted(logged, metrics_on, scrape):  # noqa: F811
    Receipt.objects.filter(id=logged[0].id).update(total_amount=1)
    Receipt.objects.filter(id=logged[2].id).update(items=[])
    with pytest.raises(CommandError, match="2 problem"):
        call_command("verifylog")
    scraped = scrape()
    assert _value(scraped, "receco_log_verified", result="problems") == 1
    assert _value(scraped, "receco_log_verified", result="ok") == 0
    assert _value(scraped, "receco_log_problems") == 2
