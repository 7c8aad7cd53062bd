"""A small HTTP load generator, used by bench/run.py when wrk is not installed.

Same scenarios and output as bench/wrk.lua: ``--connections`` threads, each with one
keep-alive connection (http.client reconnects when the server closes it), for
``--duration`` seconds or ``--max-requests`` in all, whichever comes first. It only
talks to loopback addresses. Prints one line ``BENCH_RESULT {json}``.

Being Python, it needs more CPU per request than wrk, CPU the server then lacks on a
small machine: its figures are lower than wrk's for the same server.
"""

import argparse
import http.client
import ipaddress
import json
import random
import socket
import threading
import time
from urllib.parse import quote, urlsplit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url", help="server base, e.g. http://127.0.0.1:8701")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--max-requests", type=int, default=2_000_000)
    parser.add_argument("--mode", choices=["get", "create"], default="get")
    parser.add_argument("--refs", help="file of tokens/short codes, one per line (get)")
    parser.add_argument("--auth", default="", help="Authorization header value")
    parser.add_argument("--run", default="x", help="prefix unique to this run (create tokens)")
    parser.add_argument("--body", default="", help="create body with TOKEN where the token goes")
    args = parser.parse_args()

    target = urlsplit(args.url)
    host, port = target.hostname, target.port or 80
    if not ipaddress.ip_address(socket.gethostbyname(host)).is_loopback:
        parser.error("the load generator only targets loopback addresses")
    headers = {"Authorization": args.auth} if args.auth else {}
    if args.mode == "get":
        with open(args.refs) as refs:
            paths = [
                "/api/trpc/getReceipt?input=" + quote(json.dumps({"token": line.strip()}, separators=(",", ":")))
                for line in refs
                if line.strip()
            ]
    else:
        headers["Content-Type"] = "application/json"
        head, tail = args.body.split("TOKEN", 1)

    deadline = time.monotonic() + args.duration
    budget = [args.max_requests]
    lock = threading.Lock()
    latencies: list[float] = []
    errors = {"connect_errors": 0, "read_errors": 0, "status_errors": 0}

    def worker(tid: int) -> None:
        rng = random.Random(tid)  # noqa: S311  (load pattern, not secrets)
        connection = http.client.HTTPConnection(host, port, timeout=5)
        mine, counter = [], 0
        while time.monotonic() < deadline:
            with lock:
                if budget[0] <= 0:
                    break
                budget[0] -= 1
            started = time.perf_counter()
            try:
                if args.mode == "get":
                    connection.request("GET", rng.choice(paths), headers=headers)
                else:
                    counter += 1
                    body = f"{head}b{args.run}t{tid}n{counter}{tail}"
                    connection.request("POST", "/api/trpc/createReceiptFromPOS", body=body, headers=headers)
                response = connection.getresponse()
                response.read()
            except OSError:
                with lock:
                    errors["read_errors"] += 1
                connection.close()
                continue
            mine.append(time.perf_counter() - started)
            if response.status >= 400:
                with lock:
                    errors["status_errors"] += 1
        connection.close()
        with lock:
            latencies.extend(mine)

    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(tid,)) for tid in range(1, args.connections + 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    latencies.sort()

    def percentile(p: float) -> int:
        if not latencies:
            return 0
        return int(latencies[min(len(latencies) - 1, int(len(latencies) * p / 100))] * 1e6)

    result = {
        "requests": len(latencies),
        "duration_us": int(elapsed * 1e6),
        "p50_us": percentile(50),
        "p90_us": percentile(90),
        "p99_us": percentile(99),
        "max_us": int(latencies[-1] * 1e6) if latencies else 0,
        "write_errors": 0,
        "timeouts": 0,
        **errors,
    }
    print("BENCH_RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
