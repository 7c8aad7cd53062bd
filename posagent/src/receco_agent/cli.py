"""The ``receco-agent`` command: the one entry point, where logging is configured."""

import argparse
import json
import logging
import logging.handlers
import signal
import sys
import threading
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from receco_agent import __version__, client, config, service_install
from receco_agent.agent import Agent
from receco_agent.config import ConfigError, Settings
from receco_agent.emulator import EmulatorServer, Till
from receco_agent.outbox import Outbox
from receco_agent.runner import SHUTDOWN_TIMEOUT, configure_logging, run_agent

log = logging.getLogger("receco_agent")

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
HEALTH_TIMEOUT = 2.0
INIT_CHECK_TIMEOUT = 5.0


def _cmd_init(args: argparse.Namespace) -> int:
    home = config.resolve_home(args.home)
    updates = {
        "merchantId": args.merchant_id,
        "apiKey": args.api_key,
        "rececoApiUrl": args.api_url,
        "rececoWebUrl": args.web_url,
        "port": args.port,
        "enableOfflineMode": args.offline_mode,
        "printQRCodes": args.print_qr,
        "logLevel": args.log_level,
    }
    try:
        before = config.load(home)
    except ConfigError:
        before = None
    path = config.write(home, updates)
    print(f"Wrote {path} (readable only by you: it holds the API key).")
    settings = config.load(home)
    if settings.api_key:
        reachable, detail = client.probe(settings.api_url, settings.api_key, INIT_CHECK_TIMEOUT)
        if not reachable:
            print(f"Could not check the API key now: {detail}")
        elif detail.startswith("API key refused"):
            print(f"{detail}. Copy the key again from the dashboard and run init with --api-key.", file=sys.stderr)
            return EXIT_FAILED
        else:
            print(f"Checked with {settings.api_url}: {detail}.")
    running = [s for s in (before, settings) if s is not None and _agent_health(s) is not None]
    if running:
        print(
            f"An agent is running on {running[0].agent_url} with the old settings: restart it to use these "
            "('receco-agent stop-service' then 'start-service', or Ctrl-C and 'receco-agent start')."
        )
    else:
        print("Next: 'receco-agent test' to send a test sale, 'receco-agent start' to run the agent.")
    return EXIT_OK


def _cmd_start(args: argparse.Namespace, settings: Settings) -> int:
    stop = threading.Event()

    def request_stop(signum, frame) -> None:
        stop.set()

    for name in ("SIGINT", "SIGTERM", "SIGBREAK"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), request_stop)
    try:
        run_agent(settings, stop, host=args.host)
    except OSError as exc:
        log.error(
            "Cannot listen on %s:%s (%s); is another agent running? Choose another port with "
            "'receco-agent init --port N' or RECECO_AGENT_PORT",
            args.host,
            settings.port,
            exc.strerror or exc,
        )
        return EXIT_FAILED
    return EXIT_OK


def _agent_health(settings: Settings) -> dict | None:
    try:
        with urllib.request.urlopen(f"{settings.agent_url}/health", timeout=HEALTH_TIMEOUT) as response:  # noqa: S310 (http://127.0.0.1 only)
            document = json.loads(response.read())
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict) or document.get("agent") != "receco-agent":
        return None
    # An agent of another home on this port is not this home's (an agent before 0.2 does not say).
    if document.get("home") not in (None, str(settings.home)):
        return None
    return document


def _post_to_agent(settings: Settings, transaction: dict) -> tuple[int, dict]:
    request = urllib.request.Request(  # noqa: S310 (http://127.0.0.1 only)
        f"{settings.agent_url}/transactions",
        data=json.dumps(transaction).encode("utf-8"),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 (http://127.0.0.1 only)
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def _cmd_test(args: argparse.Namespace, settings: Settings) -> int:
    transaction = {
        "merchantId": settings.require_merchant_id(),
        "merchantName": "Receco agent test",
        "items": [
            {
                "name": "Test item",
                "quantity": 1,
                "unitPrice": 100,
                "totalPrice": 100,
                "sku": "TEST-1",
            }
        ],
        "totalAmount": 100,
        "paymentMethod": "card",
        "terminalId": "receco-agent-test",
    }
    if _agent_health(settings) is not None:
        print(f"Sending a test sale through the running agent at {settings.agent_url}")
        status, answer = _post_to_agent(settings, transaction)
    else:
        print("The agent is not running; sending a test sale from here through the same queue")
        status, answer = Agent(settings).accept(json.dumps(transaction).encode("utf-8"))
    if answer.get("status") != "success":
        print(f"Test sale refused (HTTP {status}): {answer.get('error')}", file=sys.stderr)
        return EXIT_FAILED
    print(f"Short code:  {answer['shortCode']}")
    print(f"Receipt URL: {answer['receiptUrl']}")
    if answer.get("queued"):
        summary = Outbox(settings.queue_path).summary()
        error = (summary["last_error"] or {}).get("message", "unknown error")
        print(f"Queued, not yet uploaded: {error}", file=sys.stderr)
        print(
            "It is uploaded as soon as the agent runs and the service answers.",
            file=sys.stderr,
        )
        return EXIT_FAILED
    print("Uploaded: the receipt is on the service.")
    return EXIT_OK


def status_document(settings: Settings) -> dict:
    """Return the running agent's /health, or the same facts read from the queue file."""
    health = _agent_health(settings)
    if health is not None:
        return health
    # Reading the status must not create the queue file of an agent never started.
    summary = Outbox(settings.queue_path).summary() if settings.queue_path.exists() else Outbox.empty_summary()
    online, detail = client.probe(settings.api_url, settings.api_key, HEALTH_TIMEOUT)
    return {
        "agent": "receco-agent",
        "version": __version__,
        "status": "not running",
        "running": False,
        "online": online,
        "service_detail": detail,
        "merchantId": settings.merchant_id,
        "rececoApiUrl": settings.api_url,
        "rate_limit": None,
        **summary,
    }


def _per_window(seconds: int | None) -> str:
    return {1: "a second", 60: "a minute", 3600: "an hour", 86400: "a day"}.get(seconds, f"per {seconds} s")


def _rate_limit_line(rate: dict | None) -> str | None:
    """The status line of the service's rate limits, or None when it states none."""
    if not rate:
        return None
    parts = [f"{limit['quota']} calls {_per_window(limit['window'])}" for limit in rate["limits"] if limit["quota"]]
    line = ", ".join(parts) or "the service limits its calls"
    if rate["wait_seconds"]:
        line += f"; uploads wait {rate['wait_seconds']:.0f} s for the limit"
    if rate["refused"]:
        line += f"; {rate['refused']} call(s) refused with 429 since the start"
    return line


def _cmd_status(args: argparse.Namespace, settings: Settings) -> int:
    doc = status_document(settings)
    if args.json:
        print(json.dumps(doc, indent=2))
        return EXIT_OK
    running = f"running on {settings.agent_url}" if doc["running"] else "not running"
    online = {True: "reachable", False: "unreachable", None: "not contacted yet"}[doc["online"]]
    print(f"Agent:        {running}")
    print(f"Service:      {online} ({settings.api_url})")
    print(f"Queue:        {doc['pending']} pending, {doc['failed']} failed")
    if doc.get("oldest_pending"):
        print(f"Oldest:       {doc['oldest_pending']}")
    print(f"Last upload:  {doc['last_success'] or 'never'}")
    rate_limit = _rate_limit_line(doc.get("rate_limit"))
    if rate_limit:
        print(f"Rate limit:   {rate_limit}")
    if doc.get("damaged_queue"):
        damaged = doc["damaged_queue"]
        print(
            f"DAMAGED QUEUE: on {damaged['at']} the queue file was unreadable ({damaged['error']}); it was kept "
            f"as {damaged['kept_as']} and a fresh queue started. Sales waiting in it were not uploaded."
        )
    if doc["last_error"]:
        error = doc["last_error"]
        print(f"Last error:   {error['at']} {error['message']}")
    for item in doc["failed_transactions"]:
        print(f"  failed {item['token']} ({item['short_code']}): HTTP {item['status']} {item['error']}")
    if doc["failed"]:
        print("Remove failed sales with 'receco-agent clear-queue' or resend them with 'receco-agent retry-failed'.")
    for change in doc["short_code_changes"]:
        print(f"  short code changed by the service: {change['token']} {change['requested']} -> {change['assigned']}")
    return EXIT_OK


def _cmd_clear_queue(args: argparse.Namespace, settings: Settings) -> int:
    removed = Outbox(settings.queue_path).clear_failed()
    print(f"Removed {removed} failed transaction(s) from the queue.")
    return EXIT_OK


def _cmd_retry_failed(args: argparse.Namespace, settings: Settings) -> int:
    count = Outbox(settings.queue_path).retry_failed()
    print(f"Queued {count} failed transaction(s) again; the running agent sends them shortly.")
    return EXIT_OK


def _cmd_emulator(args: argparse.Namespace, settings: Settings) -> int:
    till = Till(
        agent_url=args.agent_url or settings.agent_url,
        merchant_id=settings.require_merchant_id(),
        merchant_name=args.merchant_name,
        currency=args.currency,
    )
    stop = threading.Event()
    for name in ("SIGINT", "SIGTERM", "SIGBREAK"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), lambda signum, frame: stop.set())
    try:
        server = EmulatorServer(till, host=args.host, port=args.port)
    except OSError as exc:
        log.error(
            "Cannot listen on %s:%s (%s); choose another with --port",
            args.host,
            args.port,
            exc.strerror or exc,
        )
        return EXIT_FAILED
    thread = threading.Thread(
        target=server.serve_forever,
        name="receco-emulator",
        kwargs={"poll_interval": 0.2},
    )
    thread.start()
    log.info(
        "POS emulator: till page at http://%s:%s/ , forwarding to %s",
        args.host,
        args.port,
        till.agent_url,
    )
    try:
        while not stop.wait(0.5):
            pass
    finally:
        server.stop(SHUTDOWN_TIMEOUT)
        server.server_close()
        thread.join(SHUTDOWN_TIMEOUT)
    return EXIT_OK


def _cmd_service(args: argparse.Namespace, settings: Settings) -> int:
    action = args.command.removesuffix("-service")
    plan = service_install.make_plan(
        action,
        settings,
        platform=args.platform,
        system=args.system,
        dry_run=args.dry_run,
    )
    service_install.carry_out(plan, args.dry_run, sys.stdout)
    return EXIT_OK


def _http_url(text: str) -> str:
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"{text!r} is not an http:// URL such as http://127.0.0.1:3001")
    return text.rstrip("/")


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``receco-agent``."""
    parser = argparse.ArgumentParser(prog="receco-agent", description="Receco local POS agent.")
    parser.add_argument("--version", action="version", version=f"receco-agent {__version__}")
    parser.add_argument(
        "--home",
        help="agent home directory (default: $RECECO_AGENT_HOME or the user config dir)",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    init = commands.add_parser("init", help="write the configuration file")
    init.add_argument("--merchant-id", required=True)
    init.add_argument("--api-key", help="API key (postest_... or poslive_...); '' for none")
    init.add_argument("--api-url", help="parent URL of /trpc, e.g. https://receco.example/api")
    init.add_argument("--web-url", help="customer web app base URL, e.g. https://receco.example")
    init.add_argument("--port", type=int, help="port the agent listens on (default 3001)")
    init.add_argument("--offline-mode", action=argparse.BooleanOptionalAction, default=None)
    init.add_argument("--print-qr", action=argparse.BooleanOptionalAction, default=None)
    init.add_argument("--log-level", choices=config.LOG_LEVELS)

    start = commands.add_parser("start", help="run the agent in the foreground")
    start.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")

    commands.add_parser("test", help="send a test sale and print its short code and receipt URL")
    status = commands.add_parser("status", help="show the agent's health and queue")
    status.add_argument("--json", action="store_true", help="print JSON")

    emulator = commands.add_parser("emulator", help="run the POS emulator and its till page")
    emulator.add_argument("--port", type=int, default=3002)
    emulator.add_argument("--host", default="127.0.0.1")
    emulator.add_argument(
        "--agent-url",
        type=_http_url,
        help="agent to forward to (default http://127.0.0.1:<port setting>)",
    )
    emulator.add_argument("--merchant-name", help="merchant name printed on the receipts")
    emulator.add_argument("--currency", help="currency code of the sales (default: the service's)")

    commands.add_parser("clear-queue", help="remove failed transactions from the queue")
    commands.add_parser("retry-failed", help="queue failed transactions again")
    for action in service_install.ACTIONS:
        sub = commands.add_parser(f"{action}-service", help=f"{action} the agent as an OS service")
        sub.add_argument(
            "--dry-run",
            action="store_true",
            help="print what would be done, do nothing",
        )
        sub.add_argument(
            "--system",
            action="store_true",
            help="system-wide unit/daemon instead of a per-user one",
        )
        sub.add_argument(
            "--platform",
            choices=service_install.PLATFORMS,
            help="target platform (default: this one)",
        )
    return parser


_HANDLERS = {
    "start": _cmd_start,
    "test": _cmd_test,
    "status": _cmd_status,
    "emulator": _cmd_emulator,
    "clear-queue": _cmd_clear_queue,
    "retry-failed": _cmd_retry_failed,
}


def main(argv: list[str] | None = None) -> int:
    """Run ``receco-agent``; return the process exit status."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == "init":
            return _cmd_init(args)
        settings = config.load(args.home)
        configure_logging(settings.log_level)
        if args.command.endswith("-service"):
            if args.platform and not args.dry_run:
                raise service_install.ServiceError("--platform is only for --dry-run")
            return _cmd_service(args, settings)
        return _HANDLERS[args.command](args, settings)
    except ConfigError as exc:
        print(f"receco-agent: configuration error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except service_install.ServiceError as exc:
        print(f"receco-agent: {exc}", file=sys.stderr)
        return EXIT_FAILED
