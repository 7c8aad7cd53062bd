"""E-invoicing's worker: how many reports a second the task worker sends to NRS, measured
against the double of NRS on loopback (tests/einvoicing/nrs.py): NRS cannot be reached here.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/receco_einvoicing python bench/einvoicing.py --sales 1000

It migrates the database named by DATABASE_URL (made on first use; SQLite in a temporary
file without it), sets up a merchant of its own (``einvoicing-bench``) that reports to the
double, and makes ``--sales`` sales as a POS's sale is made (each one records its report
and its delivery in the outbox). Then it starts ``--workers`` task workers (``manage.py
db_worker``, as production runs them) and waits until every report is reported. It prints
reports a second, from the double's first call to the last report's confirmation (a
worker's start-up left out), and the workers' CPU a report. ``--latency-ms`` delays each of
the double's answers, for NRS's distance. It deletes what it made unless ``--keep``.
"""

import argparse
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cryptography.fernet import Fernet  # noqa: E402
from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402

from bench.servers import create_database  # noqa: E402
from tests.einvoicing.nrs import NRSDouble, Taxpayer  # noqa: E402

MERCHANT = "einvoicing-bench"
TAXPAYER = Taxpayer(
    api_key=f"bench-{secrets.token_hex(8)}",
    api_secret=secrets.token_urlsafe(48),
    business_id="800a1faf-4b81-4b6e-bbe0-cfeb6ca31d4a",
    service_id="94ND90NR",
)
SALE = {
    "merchant_string_id": MERCHANT,
    "total_amount": 130000,
    "currency": "NGN",
    "transaction_date": "2026-11-22T10:15:00Z",
    "items": [
        {"name": "Jollof rice", "quantity": 2, "unit_price": 50000, "total_price": 100000},
        {"name": "Chapman", "quantity": 1, "unit_price": 30000, "total_price": 30000},
    ],
    "payment_method": "card",
    "subtotal_amount": 130000,
    "tax_lines": [{"name": "VAT", "rate": 7.5, "taxable_amount": 120930, "tax_amount": 9070, "inclusive": True}],
}


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sales", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--latency-ms", type=float, default=0.0, help="added to each of the double's answers")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for every report")
    parser.add_argument("--keep", action="store_true", help="keep the rows made")
    return parser.parse_args()


def _environment(double: NRSDouble) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "receco.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-" + secrets.token_hex(16))
    os.environ.setdefault("DJANGO_DEBUG", "false")
    os.environ.setdefault("DJANGO_LOG_LEVEL", "WARNING")
    os.environ.setdefault("RECECO_WEB_URL", "http://127.0.0.1:8000")
    os.environ.setdefault("RECECO_LOCAL_CACHE", "1")
    if not os.environ.get("DATABASE_URL"):
        os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp()}/einvoicing-bench.sqlite3"
    if os.environ["DATABASE_URL"].startswith(("postgres://", "postgresql://")):
        create_database(os.environ["DATABASE_URL"])
    os.environ["RECECO_TASKS_BACKEND"] = "database"  # as in production: the sale queues, a worker sends
    os.environ["RECECO_EINVOICING_KEYS"] = Fernet.generate_key().decode()
    os.environ["RECECO_EINVOICING_URL"] = double.url


def _crypto_keys() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()
    pem = key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return pem + "VVhrallFNVZUdDV0eUJmYWV1RmYwUXJRNEhTdXlhcU1pOGZsWA==\n"


def _cpu_seconds(pid: int) -> float:
    """User and system CPU of process ``pid`` so far (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    args = _arguments()
    double = NRSDouble(TAXPAYER, latency=args.latency_ms / 1000)
    _environment(double)

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from einvoicing.models import EINVOICE, EInvoicing, Report
    from merchants.models import Merchant
    from messaging.models import Delivery
    from receipts.creation import create_receipt
    from receipts.models import Receipt
    from receipts.validation import validate_sale

    call_command("migrate", verbosity=0)
    merchant, _ = Merchant.objects.update_or_create(
        string_id=MERCHANT,
        defaults={
            "name": "E-invoicing Bench Kitchen",
            "legal_name": "E-invoicing Bench Kitchen Ltd",
            "address": "12 Admiralty Way, Lekki Phase 1",
            "support_email": "bench@example.com",
            "tax_id_scheme": "NG_TIN",
            "tax_id": "29445920-4211",
            "require_api_key": False,
        },
    )
    setup, _ = EInvoicing.objects.get_or_create(
        merchant=merchant,
        defaults={"business_id": TAXPAYER.business_id, "service_id": TAXPAYER.service_id, "city": "Lagos"},
    )
    setup.enabled, setup.postal_zone = True, "106104"
    setup.set_credentials(api_key=TAXPAYER.api_key, api_secret=TAXPAYER.api_secret, crypto_keys=_crypto_keys())
    setup.save()
    _clean(merchant, Receipt, Delivery, EINVOICE)

    print(
        f"database: {connection.vendor}; {args.sales} sales; {args.workers} worker(s); "
        f"NRS latency {args.latency_ms:g} ms"
    )
    started = time.perf_counter()
    for n in range(args.sales):
        create_receipt(merchant, validate_sale({**SALE, "token": f"rcpt_ebench_{n:08d}"}), keyed=True)
    print(f"queued {args.sales} reports in {time.perf_counter() - started:.1f} s (the sales' own transactions)")
    connection.close()

    log = Path(tempfile.mkdtemp()) / "worker.log"
    command = [sys.executable, "manage.py", "db_worker", "--no-startup-delay", "--no-reload", "--interval", "0.2"]
    with log.open("wb") as output:
        workers = [
            subprocess.Popen(command, cwd=ROOT, env=os.environ, stdout=output, stderr=output)
            for _ in range(args.workers)
        ]
    try:
        deadline = time.monotonic() + args.timeout
        while Report.objects.filter(merchant_id=merchant.pk, state=Report.State.REPORTED).count() < args.sales:
            if time.monotonic() > deadline or any(worker.poll() is not None for worker in workers):
                sys.exit(f"not every report was reported: {_states(Report, merchant)}\n{log.read_text()[-3000:]}")
            time.sleep(0.1)
        cpu = sum(_cpu_seconds(worker.pid) for worker in workers)
    finally:
        for worker in workers:
            worker.terminate()
            worker.wait(30)
    invoice_calls = [call for call in double.calls if "/resources/" not in call.path]
    elapsed = invoice_calls[-1].at - invoice_calls[0].at
    lists = len(double.calls) - len(invoice_calls)
    print(
        f"reported {args.sales} in {elapsed:.1f} s: {args.sales / elapsed:.1f} reports/s "
        f"(from the double's first call to the last confirmation); {len(invoice_calls)} invoice calls, "
        f"{lists} code lists"
    )
    print(
        f"  the workers' CPU: {cpu / args.sales * 1000:.1f} ms a report, start-up included "
        f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
    )
    double.close()
    if not args.keep:
        _clean(merchant, Receipt, Delivery, EINVOICE)
        merchant.delete()


def _states(report_model, merchant) -> dict:
    from django.db.models import Count

    return dict(
        report_model.objects.filter(merchant_id=merchant.pk).values_list("state").annotate(Count("pk")).order_by()
    )


def _clean(merchant, receipt_model, delivery_model, channel: str) -> None:
    """Delete the merchant's receipts (their reports with them) and its reports' deliveries."""
    delivery_model.objects.filter(channel=channel, merchant_id=merchant.pk).delete()
    ids = list(receipt_model.objects.filter(merchant=merchant).values_list("id", flat=True))
    for start in range(0, len(ids), 10_000):
        receipt_model.objects.filter(id__in=ids[start : start + 10_000]).delete()


if __name__ == "__main__":
    main()
