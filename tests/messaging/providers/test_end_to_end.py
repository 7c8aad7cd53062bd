"""Issue 35, done when: a receipt reaches a customer through each provider's double from a
sale at the till, and the delivery report comes back. The sale is posted to the API of a
live server, a real worker (``manage.py db_worker``, production settings) sends it
through the outbox to the provider's double, and the double reports back to the live
server, signed as the provider signs."""

import json
import time
import urllib.request

import pytest
from django.db import connection

from messaging.models import Delivery, Report
from tests.messaging.providers.conftest import EMAIL, PHONE
from tests.provider_doubles import settings_for
from tests.servers import start_worker

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

# provider -> (the sale's contact, the channel it goes on, the report the double ends with)
CASES = {
    "africastalking": ({"customer_phone": PHONE}, "sms", Report.DELIVERED),
    "twilio": ({"customer_phone": PHONE}, "sms", Report.DELIVERED),
    "termii": ({"customer_phone": PHONE}, "sms", Report.DELIVERED),
    "whatsapp": ({"customer_phone": PHONE, "customer_phone_channel": "whatsapp"}, "whatsapp", Report.READ),
    "mailgun": ({"customer_email": EMAIL}, "email", Report.DELIVERED),
}


def _post_sale(url: str, sale: dict) -> dict:
    request = urllib.request.Request(
        f"{url}/api/trpc/createReceiptFromPOS",
        data=json.dumps(sale).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=30) as response:
        return json.loads(response.read())["result"]["data"]


def _until(condition, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


@pytest.mark.parametrize("provider", list(CASES))
def test_a_sale_at_the_till_reaches_the_customer_and_its_report_comes_back(
    provider, use, doubles, reports_to, sale, settings, tmp_path
):
    contact, channel, last_report = CASES[provider]
    use(provider)
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
    db = connection.settings_dict
    database_url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    worker = start_worker(
        database_url,
        tmp_path / "worker.log",
        RECECO_WEB_URL=reports_to.url,
        **settings_for(provider),
        **doubles.environment(),
    )
    try:
        answer = _post_sale(reports_to.url, {**sale, **contact})
        assert answer["deliveries"][0]["channel"] == channel
        assert answer["deliveries"][0]["status"] == "queued"

        def reported() -> bool:
            delivery = Delivery.objects.filter(channel=channel).first()
            return delivery is not None and delivery.report == last_report

        assert _until(reported), (worker.log.read_text()[-3000:], doubles.seen, doubles.sent)
    finally:
        worker.stop()
    delivery = Delivery.objects.get(channel=channel)
    assert (delivery.status, delivery.provider) == (Delivery.Status.SENT, provider)
    assert delivery.provider_message_id
    assert len(doubles.seen) == 1  # sent once
    assert all(report.status == 200 for report in doubles.sent)
    log = worker.log.read_text()
    assert PHONE not in log
    assert EMAIL not in log
