"""Key use is tracked without a database write per request."""

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from merchants.models import ApiKey, KeyUsage
from merchants.usage import count_call, flush_usage, usage_report
from tests.helpers import bearer

pytestmark = pytest.mark.django_db


def _get(api, issued):
    return api.client.get("/api/trpc/getReceipt", {"input": json.dumps({"token": "ZZZZZZ"})}, headers=bearer(issued))


def _writes(queries):
    return [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(("UPDATE", "INSERT", "DELETE"))]


def test_last_used_is_written_at_most_once_a_minute(live_key):
    api_key = live_key.api_key
    start = timezone.now()
    with CaptureQueriesContext(connection) as queries:
        api_key.note_used(start)
        api_key.note_used(start + timedelta(seconds=59))
    assert len(_writes(queries)) == 1
    api_key.note_used(start + timedelta(seconds=61))
    api_key.refresh_from_db()
    assert api_key.last_used_at == start + timedelta(seconds=61)


def test_a_busy_key_costs_no_database_write_per_request(api, live_key):
    _get(api, live_key)
    with CaptureQueriesContext(connection) as queries:
        for _ in range(5):
            assert _get(api, live_key).status_code == 404
    assert _writes(queries) == []


def test_calls_are_counted_and_flushed_per_key_and_day(api, live_key, test_key):
    for _ in range(3):
        _get(api, live_key)
    _get(api, test_key)
    assert KeyUsage.objects.count() == 0
    assert flush_usage() == 4
    today = timezone.now().astimezone(UTC).date()
    assert {(u.api_key_id, u.day, u.requests) for u in KeyUsage.objects.all()} == {
        (live_key.api_key.pk, today, 3),
        (test_key.api_key.pk, today, 1),
    }


def test_a_second_flush_adds_only_new_calls(api, live_key):
    _get(api, live_key)
    flush_usage()
    assert flush_usage() == 0
    _get(api, live_key), _get(api, live_key)
    assert flush_usage() == 2
    assert KeyUsage.objects.get().requests == 3


def test_yesterdays_counts_are_kept_on_their_day(live_key):
    api_key = live_key.api_key
    now = datetime(2026, 11, 22, 0, 5, tzinfo=UTC)
    count_call(api_key, now - timedelta(minutes=10))
    count_call(api_key, now)
    ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
    assert flush_usage(now) == 2
    assert sorted((u.day.isoformat(), u.requests) for u in KeyUsage.objects.all()) == [
        ("2026-11-21", 1),
        ("2026-11-22", 1),
    ]


def test_a_failed_database_write_gives_the_counts_back(live_key, monkeypatch):
    count_call(live_key.api_key)
    ApiKey.objects.filter(pk=live_key.api_key.pk).update(last_used_at=timezone.now())

    def broken(*args, **kwargs):
        raise RuntimeError("database gone")

    monkeypatch.setattr(KeyUsage.objects, "get_or_create", broken)
    with pytest.raises(RuntimeError):
        flush_usage()
    monkeypatch.undo()
    assert flush_usage() == 1


def test_the_report_adds_counts_not_flushed_yet(api, live_key, merchant, receipt_factory):
    receipt_factory(transaction_date=timezone.now().isoformat())
    _get(api, live_key)
    flush_usage()
    _get(api, live_key), _get(api, live_key)
    report = usage_report(merchant, days=7)
    assert len(report.days) == 7
    assert report.days[-1] == timezone.now().astimezone(UTC).date()
    assert [series.api_key for series in report.keys] == [live_key.api_key]
    assert report.keys[0].counts == [0, 0, 0, 0, 0, 0, 3]
    assert report.calls[-1] == 3


def test_the_report_shows_only_the_merchants_own_keys(api, live_key, other_live_key, other_merchant):
    _get(api, live_key)
    assert usage_report(other_merchant).keys == []


def test_two_flushes_at_once_count_each_call_once(api, live_key, monkeypatch):
    from merchants import usage
    from merchants.admission.store import store

    real = store()
    for _ in range(3):
        _get(api, live_key)

    class Racing:
        """The store, except that another flush claims the calls right after this one read them."""

        def __getattr__(self, name):
            return getattr(real, name)

        def get_many(self, names):
            snapshot = real.get_many(names)
            monkeypatch.setattr(usage, "store", lambda: real)
            assert flush_usage() == 3
            return snapshot

    monkeypatch.setattr(usage, "store", lambda: Racing())
    assert flush_usage() == 0
    assert KeyUsage.objects.get().requests == 3
    _get(api, live_key)
    assert flush_usage() == 1
    assert KeyUsage.objects.get().requests == 4
