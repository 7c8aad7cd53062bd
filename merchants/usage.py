"""Tracking API key use without a database write per request.

- ``last_used_at`` is written at most once a minute per key (ApiKey.note_used).
- Calls are counted per key and UTC day in the admission store (Redis in production),
  in the same round trip as the call's limits (merchants.admission.admit); ``flush_usage``
  (the ``flushusage`` command, run every few minutes in production) moves the counts into
  KeyUsage rows. The usage page adds what is still waiting in the store.
"""

import functools
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from merchants.admission.store import Count, store
from merchants.models import ApiKey, KeyUsage, Merchant
from receco.lib import sharedcache

# Counters are kept this many days, so a flush that did not run for a while loses nothing.
COUNTER_DAYS = 7


@functools.lru_cache(maxsize=1024)  # named for every call with a key: made once a day per key
def _counter(key_id: int, day: date) -> str:
    return f"usage:key:{key_id}:{day.isoformat()}"


def _today(now: datetime) -> date:
    return now.astimezone(UTC).date()


def call_counter(key_id: int, now: datetime) -> Count:
    """The counter a call with the key ``key_id`` adds one to, for the admission's round trip."""
    return Count(_counter(key_id, _today(now)), COUNTER_DAYS * 86400, True)


def count_call(api_key: ApiKey, now: datetime | None = None) -> None:
    """Add one call to the key's counter for today on its own (lost if Redis is down)."""
    counter = call_counter(api_key.pk, now or timezone.now())
    sharedcache.guarded("usage counting", lambda: store().add(counter.name, 1, counter.ttl), None)


def _counter_names(key_ids, days) -> dict[str, tuple[int, date]]:
    return {_counter(key_id, day): (key_id, day) for key_id in key_ids for day in days}


def _recent_days(now: datetime, count: int) -> list[date]:
    today = _today(now)
    return [today - timedelta(days=offset) for offset in range(count - 1, -1, -1)]


def flush_usage(now: datetime | None = None) -> int:
    """Move the stored call counts of recently used keys into KeyUsage; return how many calls.

    Each counter is claimed by an atomic decrement before its count is added to the
    table, so calls counted meanwhile stay for the next flush and two flushes running
    at once never count a call twice. Raises if Redis is unreachable.
    """
    now = now or timezone.now()
    since = now - timedelta(days=COUNTER_DAYS)
    key_ids = ApiKey.objects.filter(last_used_at__gte=since).values_list("pk", flat=True)
    names = _counter_names(list(key_ids), _recent_days(now, COUNTER_DAYS))
    moved = 0
    for name, seen in store().get_many(list(names)).items():
        count = _claim(name, seen)
        if count <= 0:
            continue
        key_id, day = names[name]
        try:
            with transaction.atomic():
                row, _ = KeyUsage.objects.get_or_create(api_key_id=key_id, day=day)
                KeyUsage.objects.filter(pk=row.pk).update(requests=F("requests") + count)
        except Exception:
            store().add(name, count, COUNTER_DAYS * 86400)  # give the claim back for the next flush
            raise
        moved += count
    return moved


def _claim(name: str, seen: int | None) -> int:
    """Take up to ``seen`` calls off a counter atomically; return how many were taken.

    Another flush may have taken them since they were read: a decrement that goes below
    zero is given back, so each call is moved into the table once.
    """
    if not seen or seen <= 0:
        return 0
    remaining = store().add(name, -seen, COUNTER_DAYS * 86400)
    if remaining < 0:  # taken meanwhile (or expired and made anew): give the excess back
        store().add(name, -remaining, COUNTER_DAYS * 86400)
        return max(0, seen + remaining)
    return seen


@dataclass(frozen=True)
class KeySeries:
    api_key: ApiKey
    counts: list[int]

    @property
    def total(self) -> int:
        return sum(self.counts)


@dataclass(frozen=True)
class UsageReport:
    days: list[date]  # UTC days, as calls are counted
    keys: list[KeySeries]  # every key with calls in the period

    @property
    def calls(self) -> list[int]:
        return [sum(series.counts[index] for series in self.keys) for index in range(len(self.days))]


def usage_report(merchant: Merchant, days: int = 30, now: datetime | None = None) -> UsageReport:
    """Calls per key per UTC day over the last ``days`` days, today included (with the
    calls not flushed yet). (Sales per day are receipts.daily's: the usage page adds them.)"""
    now = now or timezone.now()
    period = _recent_days(now, days)
    index = {day: position for position, day in enumerate(period)}
    keys = {key.pk: key for key in ApiKey.objects.filter(merchant=merchant)}
    counts = {key_id: [0] * days for key_id in keys}
    for row in KeyUsage.objects.filter(api_key__merchant=merchant, day__gte=period[0]):
        counts[row.api_key_id][index[row.day]] += row.requests
    names = _counter_names(list(keys), period[-COUNTER_DAYS:])
    pending = sharedcache.guarded("usage report", lambda: store().get_many(list(names)), {})
    for name, count in pending.items():
        key_id, day = names[name]
        counts[key_id][index[day]] += max(count or 0, 0)

    series = [KeySeries(keys[key_id], values) for key_id, values in counts.items() if any(values)]
    series.sort(key=lambda item: item.api_key.created_at)
    return UsageReport(period, series)
