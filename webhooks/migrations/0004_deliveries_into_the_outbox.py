"""Webhook deliveries move into the outbox (messaging.Delivery, channel "webhook"), every
row in every state: the destination is the endpoint's id, the payload the event's;
"succeeded" is now "sent", with its time; the last attempt's error is kept. Their ids
are offset above the receipt deliveries moved before them, and their attempts follow.
A delivery left "sending" has its attempt counted (the sweep records it as failed). A
delivery whose event is gone had nothing to send and is left behind, with its attempts."""

from django.core.management.color import no_style
from django.db import migrations

COLUMNS = (
    "id, channel, merchant_id, receipt_id, destination, payload_id, keyed, status, attempts, next_attempt_at,"
    " last_error, last_status_code, sent_at, request_id, created_at, updated_at"
)
MOVED = "SELECT d.id FROM webhooks_delivery d JOIN webhooks_event e ON e.id = d.event_id"


def into_the_outbox(apps, schema_editor):
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        cursor.execute("SELECT COALESCE(MAX(id), 0) FROM messaging_delivery")
        offset = cursor.fetchone()[0]
        cursor.execute(f"DELETE FROM webhooks_attempt WHERE delivery_id NOT IN ({MOVED})")  # noqa: S608
        cursor.execute(
            f"INSERT INTO messaging_delivery ({COLUMNS})"  # noqa: S608 (fixed names)
            " SELECT d.id + %s, 'webhook', e.merchant_id, NULL, CAST(d.endpoint_id AS TEXT), d.event_id, %s,"
            "  CASE d.status WHEN 'succeeded' THEN 'sent' ELSE d.status END,"
            "  d.attempts + CASE WHEN d.status = 'sending' THEN 1 ELSE 0 END, d.next_attempt_at,"
            "  COALESCE((SELECT a.error FROM webhooks_attempt a WHERE a.delivery_id = d.id ORDER BY a.id DESC LIMIT 1),"
            "  ''), d.last_status_code, CASE WHEN d.status = 'succeeded' THEN d.updated_at END, '',"
            "  d.created_at, d.updated_at"
            " FROM webhooks_delivery d JOIN webhooks_event e ON e.id = d.event_id",
            [offset, False],
        )
        cursor.execute("UPDATE webhooks_attempt SET delivery_id = delivery_id + %s", [offset])
        for sql in connection.ops.sequence_reset_sql(no_style(), [apps.get_model("messaging", "Delivery")]):
            cursor.execute(sql)
        cursor.execute("DELETE FROM webhooks_delivery")


def back_to_webhooks(apps, schema_editor):
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO webhooks_delivery (id, event_id, endpoint_id, status, attempts, next_attempt_at,"
            " last_status_code, created_at, updated_at)"
            " SELECT id, payload_id, CAST(destination AS BIGINT), CASE status WHEN 'sent' THEN 'succeeded'"
            "  ELSE status END, attempts, next_attempt_at, last_status_code, created_at, updated_at"
            " FROM messaging_delivery WHERE channel = 'webhook'"
        )
        cursor.execute("DELETE FROM messaging_delivery WHERE channel = 'webhook'")
        for sql in connection.ops.sequence_reset_sql(no_style(), [apps.get_model("webhooks", "Delivery")]):
            cursor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [
        ("webhooks", "0003_attempts_without_constraint"),
        ("messaging", "0002_receipt_deliveries"),
    ]

    operations = [migrations.RunPython(into_the_outbox, back_to_webhooks)]
