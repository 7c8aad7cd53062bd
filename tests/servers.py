"""The project served by a real gunicorn, as in production (gunicorn.conf.py's worker class
and limits), for tests of what only a real server shows: raw HTTP, worker processes,
database outages."""

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests import databases

ROOT = Path(__file__).resolve().parents[1]
SECRET = "tests-only-secret-key-not-for-any-deployment"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def closed_port() -> Iterator[int]:
    """A port of 127.0.0.1 on which nothing listens, held for as long as the block runs: a
    connection to it is refused, and no other program (another test run on this machine)
    can take it meanwhile, as it could a port that ``free_port`` let go."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@dataclass
class Gunicorn:
    process: subprocess.Popen
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        _stop(self.process)

    def raw(self, data: bytes, timeout: float = 10) -> bytes:
        """Send ``data`` as it is on a new connection; return all the server answers."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as sock:
            sock.sendall(data)
            # A server that answered before reading it all (a 413) may have closed already.
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_WR)
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks)


def migrate(database_url: str) -> None:
    """Create the tables of a database the test server will use: a SQLite file becomes a
    copy of the session's migrated template (tests.databases); any other database (on a
    PostgreSQL server of the test's own) is migrated by ``manage.py migrate``."""
    path = databases.sqlite_path(database_url)
    if path is not None:
        databases.copy_sqlite(path)
    else:
        manage(database_url, "migrate", "--no-input", "-v", "0")


def manage(database_url: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    """Run a management command on ``database_url`` with the servers' settings; raise if it fails."""
    finished = run_manage(database_url, *args, **env)
    finished.check_returncode()
    return finished


def run_manage(database_url: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    """Run a management command on ``database_url`` with the servers' settings, as it ends."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=_environment(database_url, env),
        capture_output=True,
        text=True,
    )


def start_command(database_url: str, *args: str, stderr: Path, **env: str) -> subprocess.Popen:
    """Run a management command on ``database_url`` with the servers' settings, as an
    operator's shell does: its output on a pipe (``.stdout``, bytes), its errors in ``stderr``."""
    with stderr.open("wb") as errors:
        return subprocess.Popen(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=_environment(database_url, env),
            stdout=subprocess.PIPE,
            stderr=errors,
        )


def start_gunicorn(
    database_url: str, log: Path, workers: int = 1, host: str = "127.0.0.1", access_log: bool = False, **env: str
) -> Gunicorn:
    """Serve the project with gunicorn.conf.py (worker class, limits) on a free port, bound
    to ``host`` (``[::]``: dual stack; the tests still connect to 127.0.0.1), its access
    log in ``log`` when ``access_log``."""
    port = free_port()
    command = [
        sys.executable, "-m", "gunicorn", "--config", str(ROOT / "gunicorn.conf.py"), "--no-control-socket",
        "--workers", str(workers), "--bind", f"{host}:{port}", "--access-logfile", "-" if access_log else "/dev/null",
        "receco.wsgi",
    ]  # fmt: skip
    with log.open("wb") as output:
        process = subprocess.Popen(command, cwd=ROOT, env=_environment(database_url, env), stdout=output, stderr=output)
    server = Gunicorn(process, port, log)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                server.stop()
                raise RuntimeError(f"gunicorn did not start:\n{log.read_text()[-3000:]}") from None
            time.sleep(0.1)


@dataclass
class Worker:
    process: subprocess.Popen
    log: Path

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        _stop(self.process)


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def start_worker(database_url: str, log: Path, **env: str) -> Worker:
    """Run the task worker (``manage.py db_worker``) on ``database_url`` with the
    production settings, as the service's worker container does."""
    command = [sys.executable, "manage.py", "db_worker", "--no-startup-delay", "--no-reload", "--interval", "0.2"]
    with log.open("wb") as output:
        process = subprocess.Popen(command, cwd=ROOT, env=_environment(database_url, env), stdout=output, stderr=output)
    return Worker(process, log)


def _environment(database_url: str, extra: dict) -> dict:
    """Production settings (no debug) on ``database_url``, and on the suite's Redis, when it
    has one, under a key prefix of this process's own."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "RECECO_"))}
    return {
        **env,
        "DATABASE_URL": database_url,
        "DJANGO_SECRET_KEY": SECRET,
        "DJANGO_SETTINGS_MODULE": "tests.server_settings",
        "RECECO_CACHE_PREFIX": f"receco-test-server-{os.getpid()}",
        # Without the suite's Redis, each test server counts in its own memory.
        **({} if env.get("REDIS_URL") else {"RECECO_LOCAL_CACHE": "1"}),
        **extra,
    }


def forget_cache_prefix() -> None:
    """Delete what test servers of this process left in the suite's Redis (none without one)."""
    url = os.environ.get("REDIS_URL")
    if not url:
        return
    import redis

    client = redis.Redis.from_url(url)
    names = list(client.scan_iter(match=f"receco-test-server-{os.getpid()}:*", count=1000))
    if names:
        client.delete(*names)
