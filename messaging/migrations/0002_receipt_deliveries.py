"""The receipts app's deliveries (email, SMS) move into the outbox, keeping their ids:
every row, in every state; "queued" is now "pending". A delivery left "sending" had its
attempt counted only in the memory of the process sending it: it is counted here, and
the sweep records that attempt as failed. A retry put back by the dashboard ("try again
now": retrying with no time) is pending. Runs before receipts drops its table."""

from django.core.management.color import no_style
from django.db import migrations

COLUMNS = (
    "id, channel, merchant_id, receipt_id, destination, payload_id, keyed, status, attempts, next_attempt_at,"
    " last_error, last_status_code, sent_at, request_id, created_at, updated_at"
)


def into_the_outbox(apps, schema_editor):
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO messaging_delivery ({COLUMNS})"  # noqa: S608 (fixed names)
            " SELECT d.id, d.channel, r.merchant_id, d.receipt_id, d.destination, NULL, d.keyed,"
            "  CASE WHEN d.status = 'queued' OR (d.status = 'retrying' AND d.next_attempt_at IS NULL) THEN 'pending'"
            "  ELSE d.status END,"
            "  d.attempts + CASE WHEN d.status = 'sending' THEN 1 ELSE 0 END,"
            "  d.next_attempt_at, d.last_error, NULL, d.sent_at, '', d.created_at, d.updated_at"
            " FROM receipts_delivery d JOIN receipts_receipt r ON r.id = d.receipt_id"
        )
        for sql in connection.ops.sequence_reset_sql(no_style(), [apps.get_model("messaging", "Delivery")]):
            cursor.execute(sql)


def back_to_receipts(apps, schema_editor):
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO receipts_delivery (id, channel, receipt_id, destination, keyed, status, attempts,"
            " next_attempt_at, last_error, sent_at, created_at, updated_at)"
            " SELECT id, channel, receipt_id, destination, keyed,"
            "  CASE status WHEN 'pending' THEN 'queued' ELSE status END,"
            "  attempts, next_attempt_at, last_error, sent_at, created_at, updated_at"
            " FROM messaging_delivery WHERE channel IN ('email', 'sms') AND receipt_id IS NOT NULL"
        )
        cursor.execute("DELETE FROM messaging_delivery WHERE channel IN ('email', 'sms')")
        for sql in connection.ops.sequence_reset_sql(no_style(), [apps.get_model("receipts", "Delivery")]):
            cursor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [
        ("messaging", "0001_initial"),
        ("receipts", "0005_refunds_voids_and_details"),
    ]
    run_before = [("receipts", "0006_deliveries_moved_to_messaging")]

    operations = [migrations.RunPython(into_the_outbox, back_to_receipts)]
