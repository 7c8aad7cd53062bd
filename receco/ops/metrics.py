"""The service's metrics (prometheus-client), and the small functions the code that does
the work calls to count it.

Off unless RECECO_METRICS is on: then every function here returns at once. With several
gunicorn workers, each writes its values to files under PROMETHEUS_MULTIPROC_DIR (the
library's multiprocess mode, chosen by that variable when prometheus_client is first
imported), and a scrape adds them up (``exposition``); gunicorn.conf.py prepares the
directory and forgets the workers that exit.

Label values come from short fixed lists (procedure names, statuses, outcomes), never
from what a caller sent: an unknown procedure is counted as "unknown".
"""

import logging
import os

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Count
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector

logger = logging.getLogger(__name__)

_registry = CollectorRegistry()

REQUESTS = Counter(
    "receco_requests", "HTTP requests answered, by procedure (or page) and status", ["procedure", "status"],
    registry=_registry,
)  # fmt: skip
LATENCY = Histogram(
    "receco_request_duration_seconds",
    "Time to answer a request, by procedure (or page)",
    ["procedure"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
    registry=_registry,
)
RECEIPTS = Counter("receco_receipts_created", "Receipts created, by mode (test or live)", ["mode"], registry=_registry)
DELIVERIES = Counter(
    "receco_deliveries",
    "Receipt deliveries by channel and outcome: queued, duplicate or limited when asked for; "
    "sent, sink, retrying or failed after an attempt",
    ["channel", "outcome"],
    registry=_registry,
)
WEBHOOKS = Counter("receco_webhook_attempts", "Webhook delivery attempts, by outcome", ["outcome"], registry=_registry)
REFUSALS = Counter(
    "receco_rate_limit_refusals", "Calls refused by a rate limit, by limit", ["limit"], registry=_registry
)
FAIL_OPEN = Counter(
    "receco_cache_fail_open",
    "Operations that went on without the shared cache (Redis down): limits not enforced, usage not counted",
    ["operation"],
    registry=_registry,
)

# Children of REQUESTS and LATENCY by label values: .labels() takes a lock and checks
# its arguments, on every request.
_request_children: dict[tuple[str, int], tuple] = {}


def enabled() -> bool:
    """Whether metrics are on (RECECO_METRICS)."""
    return settings.RECECO_METRICS


def request_done(procedure: str, status: int, seconds: float) -> None:
    """Count one request answered with ``status`` after ``seconds``."""
    children = _request_children.get((procedure, status))
    if children is None:
        children = (REQUESTS.labels(procedure, str(status)), LATENCY.labels(procedure))
        _request_children[(procedure, status)] = children
    children[0].inc()
    children[1].observe(seconds)


def receipt_created(livemode: bool) -> None:
    """Count one new receipt (not an idempotent repeat of a sale)."""
    if settings.RECECO_METRICS:
        RECEIPTS.labels("live" if livemode else "test").inc()


def delivery(channel: str, outcome: str) -> None:
    """Count one delivery asked for (queued, duplicate, limited) or one attempt's outcome."""
    if settings.RECECO_METRICS:
        DELIVERIES.labels(channel, outcome).inc()


def webhook_attempt(outcome: str) -> None:
    """Count one webhook delivery attempt (outcome such as "delivered", "retrying", "failed")."""
    if settings.RECECO_METRICS:
        WEBHOOKS.labels(outcome).inc()


def rate_limit_refused(limit: str) -> None:
    """Count one call refused by the rate limit named ``limit``."""
    if settings.RECECO_METRICS:
        REFUSALS.labels(limit).inc()


def cache_failed_open(operation: str) -> None:
    """Count one ``operation`` that went on without the shared cache."""
    if settings.RECECO_METRICS:
        FAIL_OPEN.labels(operation).inc()


class QueueDepthCollector:
    """The task queue's ready tasks (django-tasks' database backend), read at scrape time:
    the queue is in the database, shared by every process."""

    def describe(self):
        return []  # not read when registered: the database may not be there yet

    def collect(self):
        # An app's model: this module is imported by code that runs before the apps are ready.
        from django_tasks_db.models import DBTaskResult

        counts = dict.fromkeys(settings.TASKS["default"].get("QUEUES", ["default"]), 0)
        try:
            ready = DBTaskResult.objects.ready().values("queue_name").order_by().annotate(n=Count("id"))
            counts.update((row["queue_name"], row["n"]) for row in ready)
        except DatabaseError:
            logger.warning("Task queue depth not read: the database did not answer", exc_info=True)
            return
        gauge = GaugeMetricFamily(
            "receco_task_queue_ready", "Tasks ready to run and not yet taken by a worker, by queue", labels=["queue"]
        )
        for queue, count in sorted(counts.items()):
            gauge.add_metric([queue], count)
        yield gauge


# Collectors read at scrape time, from what every process shares (the database): the
# task queue's, and those the apps register in their AppConfig.ready() (receco.ops knows
# no app).
_COLLECTORS: list = [QueueDepthCollector()]
_registry.register(_COLLECTORS[0])


def register_collector(collector) -> None:
    """Have every scrape read ``collector`` (a prometheus-client custom collector whose
    ``describe`` returns [] and whose ``collect`` reads shared state); once per class."""
    if any(type(known) is type(collector) for known in _COLLECTORS):
        return
    _COLLECTORS.append(collector)
    _registry.register(collector)


def exposition() -> tuple[bytes, str]:
    """The metrics of every process (of every worker in multiprocess mode) in the
    Prometheus text format, and its content type."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        for collector in _COLLECTORS:
            registry.register(collector)
    else:
        registry = _registry
    return generate_latest(registry), CONTENT_TYPE_LATEST
