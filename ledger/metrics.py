"""The log's metrics, read from the database at scrape time (verifylog runs as a command
of its own, the appender in the worker: no web process saw either): the last
``verifylog``'s result, when it ran and what it found, and how far the log and its
checkpoints have come (docs/operations.md, "Metrics")."""

import logging

from django.db import DatabaseError
from prometheus_client.core import GaugeMetricFamily

from ledger.models import Checkpoint, Head

logger = logging.getLogger(__name__)

RESULTS = ("ok", "problems", "never")


class LogCollector:
    """``receco_log_verified{result}`` (1 for the last verifylog's result: ok, problems,
    or never run), ``receco_log_problems``, ``receco_log_verified_timestamp_seconds``,
    ``receco_log_verified_entries``, ``receco_log_entries`` and the latest checkpoint's
    ``receco_log_checkpoint_entries`` and ``receco_log_checkpoint_timestamp_seconds``."""

    def describe(self):
        return []  # not read when registered: the database may not be there yet

    def collect(self):
        try:
            head = Head.objects.filter(id=1).first()
            checkpoint = Checkpoint.objects.order_by("-size").only("size", "created_at").first()
        except DatabaseError:
            logger.warning("Log metrics not read: the database did not answer", exc_info=True)
            return
        audited = head is not None and head.audited_at is not None
        result = "never" if not audited else "problems" if head.audit_problems else "ok"
        verified = GaugeMetricFamily(
            "receco_log_verified", "The last verifylog's result: 1 for ok, problems or never", labels=["result"]
        )
        for name in RESULTS:
            verified.add_metric([name], 1 if name == result else 0)
        yield verified
        yield GaugeMetricFamily(
            "receco_log_problems", "Problems the last verifylog found", value=head.audit_problems if audited else 0
        )
        if audited:
            yield GaugeMetricFamily(
                "receco_log_verified_timestamp_seconds",
                "When verifylog last ran (Unix time)",
                value=head.audited_at.timestamp(),
            )
            yield GaugeMetricFamily(
                "receco_log_verified_entries", "Entries the last verifylog checked", value=head.audited_size
            )
        yield GaugeMetricFamily("receco_log_entries", "Entries in the log", value=head.size if head else 0)
        if checkpoint is not None:
            yield GaugeMetricFamily(
                "receco_log_checkpoint_entries", "Entries the latest checkpoint covers", value=checkpoint.size
            )
            yield GaugeMetricFamily(
                "receco_log_checkpoint_timestamp_seconds",
                "When the latest checkpoint was published (Unix time)",
                value=checkpoint.created_at.timestamp(),
            )
