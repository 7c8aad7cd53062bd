"""What the tests of the benchmarks share: the bare reference's WSGI function on the test
database and one call of it (bench/reference.py, bench/floor), and the smoke runs of the
scripts (``smoke``: each run as a user runs it, on the suite's PostgreSQL and Redis)."""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
from io import BytesIO, StringIO
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest
from django.db import connection

from bench import reference, servers, workload
from tests import databases


@pytest.fixture
def reference_app(monkeypatch):
    """The bare reference's WSGI function, on the test database, with a connection of its
    own (closed afterwards)."""
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    local = threading.local()  # where the function keeps its connection: this test's own
    monkeypatch.setattr(reference, "_DATABASE_URL", url)
    monkeypatch.setattr(reference, "_local", local)
    yield reference.application
    opened = getattr(local, "connection", None)
    if opened is not None:
        opened.close()


def call(app, method: str, path: str, query: str = "", body: bytes = b"") -> tuple[str, bytes]:
    """The status line and the body a WSGI function answers a request."""
    answer = {}
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": BytesIO(body),
    }
    content = b"".join(app(environ, lambda status, headers: answer.update(status=status)))
    return answer["status"], content


# -- smoke runs of the benchmark scripts -------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
SMOKE_TIMEOUT = 600  # seconds a script may take on a busy machine before the test fails
RECEIPTS = "100"  # receipts in the smoke runs' database: the least that still draws every scenario


class Smoke:
    """Runs benchmark scripts as a user does (``python bench/<script> <options>``, a
    process of its own, the suite's settings left out of its environment) on the suite's
    PostgreSQL server and Redis database, in databases named after the suite's: the
    ``<suite's>_bench_100`` that bench/run.py prepares (and bench/connections.py,
    bench/cpu.py and bench/drain.py use), and one for each other script
    (``<suite's>_bench_ledger``, ...),
    kept from run to run as the benchmarks keep theirs, so that only the first run migrates
    and seeds them. Never the benchmarks' own databases, ports or Redis database."""

    def __init__(self, database_url: str, redis_url: str):
        self.server = database_url
        self.prefix = f"{urlsplit(database_url).path.strip('/')}_bench"
        self.redis_url = redis_url

    def database_url(self, suffix: str = RECEIPTS) -> str:
        return servers.database_url(self.server, f"{self.prefix}_{suffix}")

    def run(self, script: str, *arguments: str, **env: str) -> str:
        """What ``bench/<script> <arguments>`` printed; fails the test unless it exits 0."""
        return run_script(script, *arguments, **env)


def run_script(script: str, *arguments: str, **env: str) -> str:
    """What ``python bench/<script> <arguments>`` printed, run in the suite's environment
    without its settings (DJANGO_*, RECECO_*, BENCH_*, the databases) and with ``env``;
    fails the test unless it exits 0."""
    kept = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "RECECO_", "BENCH_")) and key not in ("DATABASE_URL", "REDIS_URL")
    }
    # A session of its own: a script that outlives the timeout is stopped with every process
    # it started (gunicorn, agents), which its own clean-up, killed, would never stop.
    with subprocess.Popen(
        [sys.executable, f"bench/{script}", *arguments],
        cwd=ROOT,
        env=kept | env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=SMOKE_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            pytest.fail(f"bench/{script} did not end within {SMOKE_TIMEOUT} s:\n{stdout}\n{stderr}")
    assert process.returncode == 0, f"bench/{script} exited {process.returncode}:\n{stdout}\n{stderr}"
    return stdout


@pytest.fixture(scope="session")
def smoke():
    """The benchmarks' smoke runs (tests marked ``postgres``: they need PostgreSQL, and Redis
    as the service does outside debug). The Redis keys the scripts' processes leave in the
    suite's Redis database are deleted at the end."""
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        pytest.skip("needs Redis: set REDIS_URL=redis://...")
    runs = Smoke(os.environ["DATABASE_URL"], redis_url)
    # A database a script finds missing it makes and migrates; a copy of the session's
    # migrated template is there first (tests.databases), so that its migrate has nothing to do.
    for suffix in (RECEIPTS, "reconnect", "ledger", "sale_cpu", "einvoicing", "locker_export", "search"):
        databases.copy_postgres(runs.database_url(suffix))
    yield runs
    import redis

    client = redis.Redis.from_url(redis_url)
    for prefix in (f"receco-bench-{runs.prefix}", "receco-bench-cpu:"):  # bench/cpu.py's is its own
        names = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if names:
            client.delete(*names)


@pytest.fixture(scope="session")
def prepared_database(smoke) -> str:
    """The URL of the smoke runs' database, prepared as bench/run.py prepares one (migrated,
    its merchants made, RECEIPTS seeded receipts), for the scripts that read one it prepared."""
    url = smoke.database_url()
    args = SimpleNamespace(database_url=smoke.server, redis_url=smoke.redis_url, no_signing=False)
    with contextlib.redirect_stdout(StringIO()):  # its progress lines
        workload.prepare_database(args, url, int(RECEIPTS), workload.seeding_merchants(int(RECEIPTS)))
    return url


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive ports of 127.0.0.1 free now."""
    while True:
        first = servers.free_port()
        with contextlib.ExitStack() as held:
            try:
                for port in range(first, first + count):
                    sock = held.enter_context(socket.socket())
                    sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        return first


class BenchServers(dict):
    """The URLs of the smoke runs' servers by name, and the environment a script given them
    runs in (``env``): their DJANGO_SECRET_KEY, under which the keys it makes are read."""

    def __init__(self, urls: dict[str, str], secret: str):
        super().__init__(urls)
        self.env = {"DJANGO_SECRET_KEY": secret}


@pytest.fixture(scope="session")
def bench_servers(smoke, prepared_database, tmp_path_factory) -> BenchServers:
    """One set of servers for the smoke runs that serve (bench/run.py, bench/drain.py), on
    the prepared database, started once as bench/run.py starts its own (bench.servers.serve:
    gunicorn with bench/gunicorn.conf.py, one sync worker): the project (its metrics on, as
    bench/drain.py reads them), the bare reference and Django's floor. The scripts are
    given them (``--project-url`` ...) instead of starting servers of their own, which is
    what made a smoke run's time: the harness is what they check."""
    from bench import run

    folder = tmp_path_factory.mktemp("bench-servers")
    (folder / "metrics").mkdir()
    args = SimpleNamespace(redis_url=smoke.redis_url, no_signing=False, workers=1, worker_class="sync", threads=1)
    first = free_ports(3)
    urls = {name: f"http://127.0.0.1:{first + index}" for index, name in enumerate(run.APPS)}
    env = servers.project_env(args, prepared_database, urls["project"])
    env |= {"RECECO_METRICS": "true", "PROMETHEUS_MULTIPROC_DIR": str(folder / "metrics")}
    started = [
        servers.serve(args, app, first + index, env, folder / f"{name}.log")
        for index, (name, app) in enumerate(run.APPS.items())
    ]
    try:
        for server in started:
            servers.wait_until_up(server)
        yield BenchServers(urls, env["DJANGO_SECRET_KEY"])
    finally:
        for server in started:
            servers.stop(server)
