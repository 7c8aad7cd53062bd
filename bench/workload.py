"""What the load benchmarks serve and send: the database bench/run.py prepares (its
merchants and seeded receipts, reused between runs), the scenarios drawn from it, the auth
variants and the requests, each checked once before the load.

bench/run.py and bench/connections.py measure these; bench/cpu.py and bench/sale_cpu.py
send the same sale to the same merchants in-process.
"""

import json
import secrets
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psycopg

from bench.servers import ROOT, create_database, manage, project_env

SEED_MERCHANT = "bench-shop"  # a test merchant: holds the seeded (test) receipts that getReceipt reads
POS_MERCHANT = "bench-pos"  # receives the receipts created under load (deleted before each run)
HOOKED_MERCHANT = "bench-hooked"  # the same, with a webhook endpoint: every receipt is an event
HOOK_URL = "https://hooks.bench.invalid/receco"  # never sent to: no worker runs during the benchmark
CREATE_SCENARIO = "createReceiptFromPOS, fresh tokens"
HOOKED_SCENARIO = "createReceiptFromPOS, with a webhook"
SAMPLE_SIZE = 20_000  # references drawn from the table for the getReceipt scenarios

CREATE_BODY = {
    "token": "TOKEN",
    "merchant_string_id": POS_MERCHANT,
    "merchant_name": "Bench POS",
    "merchant_logo": None,
    "accent_color": None,
    "total_amount": 130000,
    "currency": "NGN",
    "transaction_date": "2026-11-22T10:15:00.000Z",
    "items": [
        {"name": "Jollof rice", "quantity": 2, "unit_price": 50000, "total_price": 100000},
        {"name": "Chapman", "quantity": 1, "unit_price": 30000, "total_price": 30000},
    ],
    "category": "restaurant",
    "payment_method": "card",
    "location": "Lekki Phase 1",
    "status": "completed",
    "customer_email": None,
    "customer_phone": None,
}
RECEIPT_FIELDS = {
    "id", "token", "short_code", "merchant_id", "merchant_name", "merchant_logo", "accent_color", "total_amount",
    "currency", "transaction_date", "items", "category", "payment_method", "location", "status", "customer_email",
    "customer_phone", "created_at", "updated_at",
    # The whole receipt: its breakdown, card, and refunds.
    "subtotal_amount", "discount_amount", "tip_amount", "tax_lines", "payment_details", "receipt_type", "refund_of",
    "refunds",
    # What a tax receipt states: its number and what it is.
    "receipt_number", "title", "merchant_registration_number",
}  # fmt: skip

# Settings for the project's processes. The limits are raised far above what two cores


@dataclass
class Scenario:
    name: str  # "getReceipt by short code", ...
    mode: str  # "get" or "create"
    refs: Path | None = None
    merchant: str = POS_MERCHANT  # whose receipts "create" makes


@dataclass
class Variant:
    name: str  # "anonymous", "test key", "live key"
    auth: str | None = None  # Authorization header, None for anonymous calls
    unavailable: str | None = None  # why this variant cannot run on this commit


# -- the database ----------------------------------------------------------------------


def count_label(count: int) -> str:
    """``count`` as a database's name ends: 10k, 1m, 250."""
    for size, suffix in ((1_000_000, "m"), (1_000, "k")):
        if count >= size and count % size == 0:
            return f"{count // size}{suffix}"
    return str(count)


def prepare_database(args, url: str, count: int, seed_merchants: int) -> None:
    """The database at ``url`` migrated, with the benchmark's merchants, holding ``count``
    seeded receipts spread over ``seed_merchants`` merchants (or ``count``, if fewer): the same
    merchants in every database of a run, whose workers each read every merchant a
    receipt names once a minute (merchants.admission.memory), whatever the table's size."""
    seed_merchants = min(seed_merchants, count)
    create_database(url)
    env = project_env(args, url, "http://127.0.0.1:8000")
    manage(env, "migrate", "--no-input", "-v", "0")
    with psycopg.connect(url, autocommit=True) as connection:
        merchants = [(SEED_MERCHANT, "Bench Shop"), (POS_MERCHANT, "Bench POS")]
        if has_webhooks():
            merchants.append((HOOKED_MERCHANT, "Bench Hooked"))
        for string_id, display in merchants:
            if not connection.execute("SELECT 1 FROM merchants_merchant WHERE string_id = %s", (string_id,)).fetchone():
                manage(env, "createmerchant", string_id, "--name", display)
        # The anonymous variant calls without a key, as a merchant that allows it is called.
        connection.execute(
            "UPDATE merchants_merchant SET require_api_key = false WHERE string_id = ANY(%s) AND require_api_key",
            ([string_id for string_id, _ in merchants],),
        )
        if (
            has_webhooks()
            and not connection.execute(
                "SELECT 1 FROM webhooks_endpoint e JOIN merchants_merchant m ON m.id = e.merchant_id"
                " WHERE m.string_id = %s",
                (HOOKED_MERCHANT,),
            ).fetchone()
        ):
            manage(env, "createwebhook", HOOKED_MERCHANT, HOOK_URL, "--description", "benchmark")
        # The seeded receipts are test receipts, which test keys may read as well as live ones.
        if connection.execute(
            "UPDATE merchants_merchant SET is_test = true WHERE string_id = %s AND NOT is_test", (SEED_MERCHANT,)
        ).rowcount:
            connection.execute(
                "UPDATE receipts_receipt SET livemode = false WHERE livemode"
                " AND merchant_id = (SELECT id FROM merchants_merchant WHERE string_id = %s)",
                (SEED_MERCHANT,),
            )
            connection.execute("VACUUM ANALYZE receipts_receipt")
        seeded, spread = count_seeded(connection)
        if stale(seeded, spread, count, seed_merchants):
            print(
                f"  it holds {seeded:,} seeded receipts of {spread:,} merchants: removing them to seed {count:,}"
                f" over {seed_merchants:,}",
                flush=True,
            )
            delete_seeded(connection)
            seeded = 0
        if seeded < count:
            more = count - seeded
            print(f"  seeding {more:,} receipts over {min(seed_merchants, more):,} merchants", flush=True)
            started = time.monotonic()
            manage(env, "seedreceipts", SEED_MERCHANT, str(more), "--merchants", str(min(seed_merchants, more)))
            print(f"  seeded in {time.monotonic() - started:.1f} s", flush=True)
        else:
            print(f"  reusing its {seeded:,} seeded receipts of {spread:,} merchants", flush=True)
    delete_created(url)


def count_seeded(connection) -> tuple[int, int]:
    """The receipts of the seeded merchant and of those seedreceipts made like it, and how
    many of those merchants hold them."""
    return connection.execute(
        "SELECT coalesce(sum(n), 0)::bigint, count(*) FROM (SELECT count(*) AS n FROM receipts_receipt r"
        " JOIN merchants_merchant m ON m.id = r.merchant_id WHERE m.string_id = %s OR m.string_id LIKE %s"
        " GROUP BY r.merchant_id) held",
        (SEED_MERCHANT, f"{SEED_MERCHANT}-%"),
    ).fetchone()


def stale(seeded: int, spread: int, count: int, merchants: int) -> bool:
    """Whether ``seeded`` receipts held by ``spread`` merchants must go to seed ``count``
    over ``merchants``: too many, or over other merchants (fewer are topped up)."""
    return seeded > count or (seeded > 0 and spread != merchants)


def delete_seeded(connection) -> None:
    """Remove the seeded receipts: the seeded merchant's and those of the merchants made like it."""
    for (string_id,) in connection.execute(
        "SELECT string_id FROM merchants_merchant WHERE string_id = %s OR string_id LIKE %s",
        (SEED_MERCHANT, f"{SEED_MERCHANT}-%"),
    ).fetchall():
        delete_receipts_of(connection, string_id)


def seeding_merchants(count: int) -> int:
    """How many merchants ``count`` seeded receipts are spread over: one per 10,000, at most
    1,000 (a run's smaller databases over as many: ``prepare_database``)."""
    return max(1, min(1000, count // 10_000))


def delete_created(url: str) -> None:
    """Remove the receipts earlier runs created (and their events and queued tasks), so the
    table holds the seeded ones only."""
    with psycopg.connect(url, autocommit=True) as connection:
        deleted = delete_receipts_of(connection, POS_MERCHANT)
        if has_webhooks():
            # Only the benchmark writes these: its merchants' events and the tasks queued for them.
            deliveries = "messaging_delivery" if (ROOT / "messaging").is_dir() else "webhooks_delivery"
            tables = ("webhooks_attempt", deliveries, "webhooks_event", "django_tasks_database_dbtaskresult")
            connection.execute(f"TRUNCATE {', '.join(tables)}")
            deleted += delete_receipts_of(connection, HOOKED_MERCHANT)
        if deleted:
            connection.execute("VACUUM ANALYZE receipts_receipt")


def has_webhooks() -> bool:
    """Whether this commit has webhooks (the benchmark also runs on older ones)."""
    return (ROOT / "webhooks" / "management" / "commands" / "createwebhook.py").exists()


def delete_receipts_of(connection, string_id: str) -> int:
    # A keyed sale that claimed the short code of an anonymous one (a chance collision
    # between variants) left a SetAside that refers to the receipt set aside (older
    # commits have no such table).
    if connection.execute("SELECT to_regclass('receipts_setaside')").fetchone()[0]:
        connection.execute(
            "DELETE FROM receipts_setaside WHERE receipt_id IN (SELECT r.id FROM receipts_receipt r"
            " JOIN merchants_merchant m ON m.id = r.merchant_id WHERE m.string_id = %s)",
            (string_id,),
        )
    return connection.execute(
        "DELETE FROM receipts_receipt WHERE merchant_id = (SELECT id FROM merchants_merchant WHERE string_id = %s)",
        (string_id,),
    ).rowcount


def draw_scenarios(url: str, workdir: Path) -> list[Scenario]:
    """The scenarios on the database ``url``, the getReceipt ones reading references sampled
    from its seeded receipts (written in ``workdir``)."""
    with psycopg.connect(url) as connection:
        # The seeded receipts only: another benchmark's on the same database (bench/drain.py's
        # merchant, which wants a key of its own) would answer 404 to the calls that read them.
        rows = connection.execute(
            "SELECT r.short_code, r.token FROM receipts_receipt r JOIN merchants_merchant m ON m.id = r.merchant_id"
            " WHERE m.string_id = %s OR m.string_id LIKE %s ORDER BY random() LIMIT %s",
            (SEED_MERCHANT, f"{SEED_MERCHANT}-%", SAMPLE_SIZE),
        ).fetchall()
    codes, tokens = workdir / "short_codes.txt", workdir / "tokens.txt"
    codes.write_text("".join(f"{code}\n" for code, _ in rows))
    tokens.write_text("".join(f"{token}\n" for _, token in rows))
    found = [
        Scenario("getReceipt by short code", "get", codes),
        Scenario("getReceipt by token", "get", tokens),
        Scenario(CREATE_SCENARIO, "create"),
    ]
    if has_webhooks():
        found.append(Scenario(HOOKED_SCENARIO, "create", merchant=HOOKED_MERCHANT))
    return found


# -- keys --------------------------------------------------------------------------------


NO_KEYS = "(no createapikey command: API keys are not on this commit)"


def make_variants(args, url: str, env: dict) -> list[Variant]:
    """Anonymous calls, and calls with a test and a live key once the project has keys."""
    found = [Variant("anonymous")]
    has_keys = (ROOT / "merchants" / "management" / "commands" / "createapikey.py").exists()
    kinds = [kind for kind in ("test", "live") if f"{kind} key" in args.variants]  # no keys for one not run
    # One key per merchant: the seeded one reads its receipts, the POS one creates.
    merchants = (SEED_MERCHANT, POS_MERCHANT, *((HOOKED_MERCHANT,) if has_webhooks() else ()))
    keys = create_keys(env, [(merchant, kind) for kind in kinds for merchant in merchants]) if has_keys else {}
    for kind in kinds:
        if not has_keys:
            found.append(Variant(f"{kind} key", unavailable=NO_KEYS))
            continue
        found.append(Variant(f"{kind} key", auth={merchant: keys[merchant, kind] for merchant in merchants}))
    return [variant for variant in found if variant.name in args.variants]


def create_keys(env: dict, wanted: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """A new API key of each (merchant, kind) of ``wanted``, by them: ``createapikey`` for
    each, in one ``manage.py`` process (each of its own would start Django again)."""
    if not wanted:
        return {}
    script = (
        "import io\n"
        "from django.core.management import call_command\n"
        f"for merchant, kind in {wanted!r}:\n"
        "    out = io.StringIO()\n"
        "    call_command('createapikey', merchant, '--type', kind, stdout=out, stderr=io.StringIO())\n"
        "    print('KEY', merchant, kind, out.getvalue().strip().splitlines()[-1].strip())\n"
    )
    keys = {}
    for line in manage(env, "shell", "-c", script).splitlines():
        if line.startswith("KEY "):
            _, merchant, kind, key = line.split()
            keys[merchant, kind] = key
    return keys


def authorization(variant: Variant | None, scenario: Scenario) -> str:
    """The Authorization header of ``variant``'s calls in ``scenario`` ("" for anonymous calls)."""
    if variant is None or variant.auth is None:
        return ""
    key = variant.auth[SEED_MERCHANT if scenario.mode == "get" else scenario.merchant]
    return f"Bearer {key}"


# -- requests ----------------------------------------------------------------------------


def check_answer(url: str, scenario: Scenario, auth: str) -> None:
    """One request before the load: the server must answer 200 with the contract's shape."""
    headers = {"Authorization": auth} if auth else {}
    if scenario.mode == "get":
        reference = scenario.refs.read_text().split("\n", 1)[0]
        request = urllib.request.Request(
            f"{url}/api/trpc/getReceipt?input={quote(json.dumps({'token': reference}))}", headers=headers
        )
    else:
        body = create_body(scenario).replace("TOKEN", f"bcheck{secrets.token_hex(8)}").encode()
        headers["Content-Type"] = "application/json"
        request = urllib.request.Request(f"{url}/api/trpc/createReceiptFromPOS", data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, data = response.status, json.loads(response.read())["result"]["data"]
    except urllib.error.HTTPError as exc:
        sys.exit(f"{scenario.name} on {url}: {exc.code} {exc.read()[:500]!r}")
    expected = RECEIPT_FIELDS if scenario.mode == "get" else {"id", "token", "short_code", "receipt_url"}
    if status != 200 or set(data) != expected:
        sys.exit(f"{scenario.name} on {url}: unexpected answer {status} {sorted(data)}")


def create_body(scenario: Scenario) -> str:
    """The createReceiptFromPOS body of ``scenario``, with TOKEN where each request's token goes."""
    return json.dumps({**CREATE_BODY, "merchant_string_id": scenario.merchant}, separators=(",", ":"))
