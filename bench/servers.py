"""Serving the project for a benchmark: its environment and database, gunicorn with the
benchmark's settings (bench/gunicorn.conf.py) or with the image's (gunicorn.conf.py),
and what a served project said (its access log, its metrics).

bench/run.py, bench/connections.py, bench/drain.py, bench/reconnect.py and bench/cpu.py
serve (or run in-process) the same project the same way through these.
"""

import functools
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
BUFFERING = "receco.lib.gunicorn_workers.BufferingWorker"

# Settings for the project's processes. The limits are raised far above what two cores
# can serve, so every request still goes through the limiter and none is refused.
LIMIT_ENV = {
    "RECECO_RATELIMIT_LIVE_KEY": "60000000/m,1000000/s",
    "RECECO_RATELIMIT_ANONYMOUS": "60000000/m",
    "RECECO_RATELIMIT_FAILED_LOOKUPS": "60000000/m",
}

# gunicorn.conf.py's access line: host "METHOD path" status bytes ...
_STATUS = re.compile(rb'" (\d{3}) ')
# receco.lib.gunicorn_workers' line for the requests it shed
_SHED = re.compile(rb"Busy: answered 503 to (\d+) request")


# -- the database ------------------------------------------------------------------------


def database_url(base: str, name: str) -> str:
    """``base`` (a PostgreSQL URL) naming the database ``name``; exits on any other URL."""
    parts = urlsplit(base)
    if parts.scheme not in ("postgres", "postgresql"):
        sys.exit(f"the benchmark needs PostgreSQL, not {base!r}")
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))


def create_database(url: str) -> None:
    """Create the database ``url`` names (on PostgreSQL) unless it exists."""
    name = urlsplit(url).path.strip("/")
    with psycopg.connect(database_url(url, "postgres"), autocommit=True) as connection:
        if not connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            connection.execute(f'CREATE DATABASE "{name}"')


# -- the project's environment -----------------------------------------------------------


def project_env(args, url: str, web_url: str) -> dict:
    """The environment of the project's processes on the database ``url`` and the Redis
    of ``args.redis_url``, its limits raised (LIMIT_ENV), signing unless ``args.no_signing``."""
    env = dict(os.environ)
    env.update(LIMIT_ENV)
    env.update(
        {
            "DATABASE_URL": url,
            "BENCH_DATABASE_URL": url,
            "REDIS_URL": args.redis_url,
            # One prefix a database: two served at once (--interleave) share the Redis db.
            "RECECO_CACHE_PREFIX": f"receco-bench-{urlsplit(url).path.strip('/')}",
            "DJANGO_SECRET_KEY": env.get("DJANGO_SECRET_KEY") or "bench-only-" + secrets.token_hex(16),
            "DJANGO_DEBUG": "false",
            "DJANGO_LOG_LEVEL": "WARNING",
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "RECECO_WEB_URL": web_url,
            # As in production: a request only queues its tasks (webhook events), a worker sends them.
            "RECECO_TASKS_BACKEND": "database",
            "PYTHONPATH": str(ROOT),
        }
    )
    keys = None if getattr(args, "no_signing", False) else signing_keys()
    if keys is not None:  # signing on, as in production: the log's hook runs on every sale
        env["RECECO_SIGNING_KEYS"] = keys
    return env


@functools.cache
def signing_keys() -> str | None:
    """A JWK Set of one signing key made for this run, or None on a commit that does not sign."""
    if not (ROOT / "receco" / "lib" / "signingkeys.py").exists():
        return None
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))  # after any tree put first (bench/cpu.py --root runs another)
    from receco.lib.signingkeys import generate_jwk

    return json.dumps({"keys": [generate_jwk()]})


def manage(env: dict, *command: str) -> str:
    """What ``manage.py <command>`` printed; exits with its output when it fails."""
    done = subprocess.run(
        [PYTHON, str(ROOT / "manage.py"), *command], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode:
        sys.exit(f"manage.py {' '.join(command)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


# -- gunicorn ----------------------------------------------------------------------------


@dataclass
class Server:
    process: subprocess.Popen
    url: str
    log: Path


@dataclass
class ImageServer(Server):
    access_log: Path = Path()


@dataclass(frozen=True)
class Config:
    """How the image's server runs: its workers and their class."""

    workers: int
    worker_class: str

    @property
    def name(self) -> str:
        kind = "buffering" if self.worker_class == BUFFERING else self.worker_class
        return f"{self.workers} {kind}"


def serve(args, app: str, port: int, env: dict, log: Path) -> Server:
    """gunicorn serving ``app`` with the benchmark's settings (bench/gunicorn.conf.py: no
    access log) and ``args.workers``, ``args.worker_class`` and ``args.threads``."""
    command = [
        PYTHON, "-m", "gunicorn", app,
        "--config", str(ROOT / "bench" / "gunicorn.conf.py"),
        "--bind", f"127.0.0.1:{port}",
        "--workers", str(args.workers),
        "--worker-class", args.worker_class,
        "--threads", str(args.threads),
        "--error-logfile", str(log),
    ]  # fmt: skip
    env = dict(env, RECECO_WEB_URL=f"http://127.0.0.1:{port}")
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return Server(process, f"http://127.0.0.1:{port}", log)


def serve_image(config: Config, port: int, env: dict, workdir: Path) -> ImageServer:
    """gunicorn serving the project as the image does (gunicorn.conf.py), its access and
    error logs written in ``workdir``."""
    prefix = workdir / f"{config.workers}-{config.worker_class.rsplit('.', 1)[-1]}"
    access_log, error_log = Path(f"{prefix}.access.log"), Path(f"{prefix}.error.log")
    command = [
        PYTHON, "-m", "gunicorn", "receco.wsgi:application",
        "--config", str(ROOT / "gunicorn.conf.py"),
        "--bind", f"127.0.0.1:{port}",
        "--workers", str(config.workers),
        "--worker-class", config.worker_class,
        "--access-logfile", str(access_log),
        "--error-logfile", str(error_log),
    ]  # fmt: skip
    env = dict(env, RECECO_WEB_URL=f"http://127.0.0.1:{port}", DJANGO_LOG_LEVEL="WARNING")
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return ImageServer(process, f"http://127.0.0.1:{port}", error_log, access_log)


def wait_until_up(server: Server, timeout: float = 120) -> None:  # three servers start at once, on a busy machine
    """Return once ``server`` answers HTTP; exit when it exits or stays silent ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            sys.exit(f"gunicorn for {server.url} exited:\n{server.log.read_text() if server.log.exists() else ''}")
        try:
            urllib.request.urlopen(server.url + "/api/trpc/getReceipt", timeout=2)
            return
        except urllib.error.HTTPError:
            return  # any HTTP answer means the workers are serving
        except OSError:
            time.sleep(0.2)
    sys.exit(f"gunicorn for {server.url} did not answer within {timeout:g} s")


def stop(server: Server) -> None:
    """Stop ``server`` (SIGTERM, then SIGKILL after 30 s)."""
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGTERM)
        try:
            server.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()


def free_port() -> int:
    """A TCP port of 127.0.0.1 free now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- what the server said ----------------------------------------------------------------


def answers_by_status(server: ImageServer) -> Counter:
    """The answers of the server by status, from its access log, and the requests it shed
    (503, said only in its error log: they are answered before any worker serves them).
    Read once the server has stopped: a worker says its last ones as it exits."""
    found = Counter()
    if server.access_log.exists():
        for line in server.access_log.read_bytes().splitlines():
            match = _STATUS.search(line)
            if match:
                found[int(match.group(1))] += 1
    if server.log.exists():
        found[503] += sum(int(count) for count in _SHED.findall(server.log.read_bytes()))
    return +found


def status_text(statuses: Counter) -> str:
    """The service's answers by status, e.g. ``200: 51,000; 503: 3``."""
    return "; ".join(f"{status}: {count:,}" for status, count in sorted(statuses.items())) or "none logged"


def refused_calls(port: int) -> int:
    """The calls the service refused with 429 (receco_rate_limit_refusals, all limits), from its /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:
        text = response.read().decode()
    counts = [line.split()[-1] for line in text.splitlines() if line.startswith("receco_rate_limit_refusals_total")]
    return round(sum(map(float, counts)))


def load_average() -> str:
    """The machine's load average over 1, 5 and 15 minutes: ``1.20 0.95 0.60``."""
    return " ".join(f"{value:.2f}" for value in os.getloadavg())
