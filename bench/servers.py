"""Serving the project for a benchmark: its environment and database, gunicorn with the
benchmark's settings (bench/gunicorn.conf.py) or with the image's (gunicorn.conf.py),
alone or behind the shipped nginx (deploy/nginx, as compose.yaml runs it), and what a
served project said (its access logs, its metrics).

bench/run.py, bench/connections.py, bench/drain.py, bench/reconnect.py and bench/cpu.py
serve (or run in-process) the same project the same way through these.
"""

import functools
import itertools
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
# The image's worker class, as gunicorn.conf.py names it.
IMAGE_WORKER_CLASS = re.search(
    r'^worker_class = "(.+)"$', (ROOT / "gunicorn.conf.py").read_text(), flags=re.MULTILINE
).group(1)
# The proxy's per-address limits, raised as the service's are (LIMIT_ENV): the load comes
# from one address, and every request still passes through the limits.
PROXY_LIMITS = {
    "RECECO_PROXY_CONNECTIONS": "65535",
    "RECECO_PROXY_RATE": "1000000r/s",
    "RECECO_PROXY_BURST": "1000000",
}

# Settings for the project's processes. The limits are raised far above what two cores
# can serve, so every request still goes through the limiter and none is refused.
LIMIT_ENV = {
    "RECECO_RATELIMIT_LIVE_KEY": "60000000/m,1000000/s",
    "RECECO_RATELIMIT_ANONYMOUS": "60000000/m",
    "RECECO_RATELIMIT_FAILED_LOOKUPS": "60000000/m",
}

# gunicorn.conf.py's access line: host "METHOD path" status bytes ...; and the proxy's,
# for what it answered itself: host "METHOD" status bytes ...
_STATUS = re.compile(rb'" (\d{3}) ')


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
    proxy: object = None  # deploy.proxy.Proxy in front, or None


FRONTS = ("proxy", "direct")


@dataclass(frozen=True)
class Config:
    """How the image's server runs: its workers, their class and threads, and what is in
    front of it: the shipped nginx (``proxy``, as compose.yaml runs them) or nothing."""

    workers: int
    worker_class: str
    threads: int = 1
    front: str = "direct"

    @property
    def name(self) -> str:
        threads = f" x{self.threads}" if self.worker_class == "gthread" else ""
        return f"{self.workers} {self.worker_class}{threads}, {self.front}"


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
    error logs written in ``workdir``; on ``port``, or with ``config.front`` "proxy" behind
    the shipped nginx on ``port`` (gunicorn then on a free port), as compose.yaml runs them."""
    prefix = workdir / f"{config.workers}-{config.worker_class}-{config.threads}-{config.front}"
    access_log, error_log = Path(f"{prefix}.access.log"), Path(f"{prefix}.error.log")
    web_port = free_port() if config.front == "proxy" else port
    command = [
        PYTHON, "-m", "gunicorn", "receco.wsgi:application",
        "--config", str(ROOT / "gunicorn.conf.py"),
        "--bind", f"127.0.0.1:{web_port}",
        "--workers", str(config.workers),
        "--worker-class", config.worker_class,
        "--threads", str(config.threads),
        "--access-logfile", str(access_log),
        "--error-logfile", str(error_log),
    ]  # fmt: skip
    env = dict(env, RECECO_WEB_URL=f"http://127.0.0.1:{port}", DJANGO_LOG_LEVEL="WARNING")
    if config.front == "proxy":
        env["RECECO_TRUSTED_PROXY_COUNT"] = "1"
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    front = None
    if config.front == "proxy":
        from deploy import proxy

        front = proxy.start(Path(f"{prefix}.nginx"), port, f"127.0.0.1:{web_port}", **PROXY_LIMITS)
    return ImageServer(process, f"http://127.0.0.1:{port}", error_log, access_log, front)


def wait_until_up(server: Server, timeout: float = 120) -> None:  # three servers start at once, on a busy machine
    """Return once ``server`` answers HTTP; exit when it exits or stays silent ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            sys.exit(f"gunicorn for {server.url} exited:\n{server.log.read_text() if server.log.exists() else ''}")
        try:
            # /healthz: the service answers 200 (a probe that timed out in gunicorn's queue
            # is still answered, and logged, as its workers boot: a 200, not a failure).
            urllib.request.urlopen(server.url + "/healthz", timeout=2)
            return
        except urllib.error.HTTPError as answer:
            # Any answer of an app (the service, the reference, the floor: 404) means its
            # workers are serving; a 502-504 without the service's request id is the
            # proxy's own (gunicorn not up yet).
            if answer.code not in (502, 503, 504) or answer.headers.get("X-Request-Id"):
                return
            time.sleep(0.2)
        except OSError:
            time.sleep(0.2)
    sys.exit(f"gunicorn for {server.url} did not answer within {timeout:g} s")


def stop(server: Server) -> None:
    """Stop ``server`` (SIGTERM, then SIGKILL after 30 s), and the proxy in front of it."""
    if getattr(server, "proxy", None) is not None:
        server.proxy.stop()
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


def access_logs(server: ImageServer) -> list[Path]:
    """gunicorn's access log, and the proxy's in front, if any (it logs only what it
    answered itself: refusals, gunicorn unreachable, a client gone before the answer)."""
    return [server.access_log] + ([server.proxy.access_log] if server.proxy is not None else [])


def log_sizes(server: ImageServer) -> tuple[int, ...]:
    """The sizes of ``server``'s access logs now: pass them to answers_by_status as
    ``since`` to count only what it answered after."""
    return tuple(log.stat().st_size if log.exists() else 0 for log in access_logs(server))


def access_lines(server: ImageServer, since: tuple[int, ...] = ()) -> list[bytes]:
    """The lines of ``server``'s access logs (gunicorn's, then the proxy's), each log from
    its byte of ``since`` (from its start without one)."""
    lines = []
    for log, start in itertools.zip_longest(access_logs(server), since, fillvalue=0):
        if log.exists():
            with log.open("rb") as file:
                file.seek(start)
                lines.extend(file.read().splitlines())
    return lines


def status_of(line: bytes) -> int | None:
    """The status of an access line (gunicorn's or the proxy's), or None."""
    match = _STATUS.search(line)
    return int(match.group(1)) if match else None


def answers_by_status(server: ImageServer, since: tuple[int, ...] = ()) -> Counter:
    """The answers of the server by status, from gunicorn's access log and the proxy's
    (access_logs), each from its byte of ``since``. Read once the server has stopped: a
    worker says its last ones as it exits."""
    return +Counter(status for line in access_lines(server, since) if (status := status_of(line)) is not None)


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
