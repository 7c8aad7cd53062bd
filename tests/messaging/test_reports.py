"""Delivery reports (messaging.reports): each only moves a delivery's report on, whatever
order they come in; a failure after we sent fails the delivery once; a report of an
erased delivery or an unknown message changes nothing."""

import pytest

from messaging import erasure, reports
from messaging.models import SMS, Delivery, Report
from messaging.signals import delivery_failed

pytestmark = pytest.mark.django_db

PHONE = "+2348031234567"


@pytest.fixture
def delivery(receipt):
    return Delivery.objects.create(
        channel=SMS,
        merchant_id=receipt.merchant_id,
        receipt=receipt,
        destination=PHONE,
        status=Delivery.Status.SENT,
        provider="termii",
        provider_message_id="42",
        parts=1,
    )


@pytest.fixture
def failures():
    told = []

    def receiver(sender, delivery, **kwargs):
        told.append(delivery.pk)

    delivery_failed.connect(receiver, dispatch_uid="test-reports")
    yield told
    delivery_failed.disconnect(dispatch_uid="test-reports")


def _report(delivery) -> tuple[str, str]:
    delivery.refresh_from_db()
    return delivery.report, delivery.status


def test_reports_out_of_order_never_move_a_report_back(delivery):
    assert reports.record("termii", "42", Report.DELIVERED).changed
    assert not reports.record("termii", "42", Report.SENT).changed
    assert _report(delivery) == (Report.DELIVERED, Delivery.Status.SENT)
    assert reports.record("termii", "42", Report.READ).changed
    assert not reports.record("termii", "42", Report.DELIVERED).changed
    assert _report(delivery) == (Report.READ, Delivery.Status.SENT)


def test_a_failure_after_we_sent_fails_the_delivery_and_tells_once(delivery, failures):
    reports.record("termii", "42", Report.SENT)
    assert reports.record("termii", "42", Report.FAILED, f"Message Failed for {PHONE}").changed
    assert not reports.record("termii", "42", Report.FAILED, "again").changed
    delivery.refresh_from_db()
    assert (delivery.status, delivery.report_words) == (
        Delivery.Status.FAILED,
        "Not delivered: Message Failed for +234*******67",
    )
    assert delivery.last_error == "termii: Message Failed for +234*******67"  # the number never kept
    assert failures == [delivery.pk]


def test_a_failure_after_delivered_is_not_believed(delivery, failures):
    reports.record("termii", "42", Report.DELIVERED)
    assert not reports.record("termii", "42", Report.FAILED, "late").changed
    assert _report(delivery) == (Report.DELIVERED, Delivery.Status.SENT)
    assert failures == []


def test_another_providers_id_or_an_erased_delivery_changes_nothing(delivery, failures):
    assert reports.record("twilio", "42", Report.FAILED).delivery is None
    erasure.forget(Delivery.objects.filter(pk=delivery.pk))
    assert reports.record("termii", "42", Report.FAILED).delivery is None
    delivery.refresh_from_db()
    assert (delivery.report, delivery.provider_message_id, delivery.destination) == ("", "", "")
    assert failures == []
