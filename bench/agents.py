"""Offline till agents for the drain and reconnect benchmarks: sales queued as an agent
queues them while the service is unreachable, a proxy that delays every chunk as a slow
link does, an agent's environment, its health and memory, and a POS ringing up sales on it.

The checkout's agent (posagent/src) is used, not the one installed in the environment (an
editable install may point at another checkout): for the agents started and for the
queues made in-process.
"""

import asyncio
import json
import os
import sqlite3
import sys
import threading
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

AGENT_SRC = Path(__file__).resolve().parent.parent / "posagent" / "src"
sys.path.insert(0, str(AGENT_SRC))  # first: before any receco_agent installed in the environment


def sale(number: int, merchant: str) -> dict:
    """The ``number``th sale a POS sends its till (the agent's input), for ``merchant``."""
    return {
        "merchantId": merchant,
        "merchantName": "Bench Drain",
        "currency": "NGN",
        "items": [
            {"name": "Jollof rice", "quantity": 2, "unitPrice": 150000, "totalPrice": 300000, "sku": "JR-1"},
            {"name": "Zobo", "quantity": 1, "unitPrice": 50000, "totalPrice": 50000},
        ],
        "totalAmount": 350000,
        "paymentMethod": "card",
        "location": "Lekki",
        "cashierId": "c-7",
        "terminalId": f"till-{number % 4}",
    }


def queue_sales(home: Path, count: int, key: str, merchant: str) -> None:
    """Commit ``count`` sales to the agent's queue exactly as the agent does offline."""
    from receco_agent.outbox import Outbox
    from receco_agent.tokens import new_token, short_code_for
    from receco_agent.transactions import to_service_input, validate

    outbox = Outbox(home / "queue.sqlite3")
    now = datetime.now(UTC)
    for number in range(count):
        tx = validate(sale(number, merchant))
        token = new_token(key)
        code = short_code_for(token)
        body = json.dumps(to_service_input(tx, token, code, now), separators=(",", ":"))
        outbox.add(token, code, body, tx.local_fields)


class DelayProxy:
    """A TCP proxy to 127.0.0.1:<target> adding ``one_way`` seconds to every chunk in each
    direction, and a round trip before a new connection carries data (the handshake)."""

    def __init__(self, target: int, one_way: float):
        self.target = target
        self.one_way = one_way
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(10)

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._connection, "127.0.0.1", 0, backlog=512))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        opened = time.monotonic()
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        handshake_done = opened + 2 * self.one_way
        await asyncio.gather(
            self._pump(reader, up_writer, handshake_done), self._pump(up_reader, writer, 0.0), return_exceptions=True
        )

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, not_before: float) -> None:
        chunks: asyncio.Queue = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, chunk = await chunks.get()
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not chunk:
                    writer.close()
                    return
                writer.write(chunk)
                await writer.drain()

        delivering = asyncio.ensure_future(deliver())
        try:
            while True:
                chunk = await reader.read(65536)
                chunks.put_nowait((max(time.monotonic(), not_before) + self.one_way, chunk))
                if not chunk:
                    break
            await delivering
        except (ConnectionError, OSError):
            delivering.cancel()
            writer.close()


def agent_env(home: Path, key: str, proxy_port: int, agent_port: int, merchant: str) -> dict:
    env = {name: value for name, value in os.environ.items() if not name.startswith("RECECO_")}
    env.update(
        {
            "RECECO_AGENT_HOME": str(home),
            "RECECO_MERCHANT_ID": merchant,
            "RECECO_API_KEY": key,
            "RECECO_API_URL": f"http://127.0.0.1:{proxy_port}/api",
            "RECECO_WEB_URL": "http://127.0.0.1:8000",
            "RECECO_AGENT_PORT": str(agent_port),
            "RECECO_PRINT_QR": "false",
            "RECECO_LOG_LEVEL": os.environ.get("DRAIN_AGENT_LOG_LEVEL", "warning"),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(AGENT_SRC), os.environ.get("PYTHONPATH")])),
        }
    )
    return env


def health(port: int) -> dict | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as response:
            return json.loads(response.read())
    except OSError:
        return None


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def post_sale(port: int, number: int, merchant: str) -> tuple[float, float, str]:
    """Ring up one sale; return (when it was sent, time.monotonic(); seconds to the answer; its token)."""
    body = json.dumps(sale(number, merchant)).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/transactions", data=body, headers={"Content-Type": "application/json"}
    )
    sent = time.monotonic()
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = json.loads(response.read())
    elapsed = time.perf_counter() - started
    if answer.get("status") != "success":
        raise RuntimeError(f"the agent refused a POS sale: {answer}")
    return sent, elapsed, answer["receiptId"]


def backlog_done(home: Path, count: int) -> int:
    """How many of the ``count`` sales queued before the start (ids 1 to count) are confirmed."""
    connection = sqlite3.connect(f"file:{home / 'queue.sqlite3'}?mode=ro", uri=True, timeout=10)
    try:
        query = "SELECT count(*) FROM outbox WHERE state = 'done' AND id <= ?"
        return connection.execute(query, (count,)).fetchone()[0]
    finally:
        connection.close()


def run_pos(port: int, interval: float, done, answers, merchant: str) -> None:
    """Ring up a sale every ``interval`` seconds until ``done``; put the (sent, seconds, token)
    of each in ``answers``.

    It runs in a process of its own, as a POS is a machine of its own: in this one, the
    proxy's thread would hold the interpreter lock for part of the time being measured.
    """
    latencies = []
    number = 0
    while not done.wait(interval):
        latencies.append(post_sale(port, number, merchant))
        number += 1
    answers.put(latencies)
