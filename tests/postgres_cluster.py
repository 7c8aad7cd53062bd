"""A PostgreSQL server of the test's own, made with initdb on a free port and removed after:
for what must not be done to the machine's shared server (pausing it, replicating it).

As root (CI), the server runs as the ``postgres`` system user, since PostgreSQL refuses
to run as root.
"""

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg

from tests.servers import free_port


def binaries() -> Path:
    """The folder of the machine's PostgreSQL server programs (initdb, pg_ctl, ...)."""
    found = shutil.which("pg_config")
    if found:
        bindir = subprocess.run([found, "--bindir"], capture_output=True, text=True, check=True).stdout.strip()
        if (Path(bindir) / "initdb").exists():
            return Path(bindir)
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "initdb").exists():
            return candidate
    raise RuntimeError("PostgreSQL's server programs (initdb, pg_ctl) were not found")


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@dataclass
class Cluster:
    folder: Path
    port: int
    template: str = ""

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str, template: str | None = None) -> str:
        """Make the database ``name``, empty or a copy of ``template``; its URL."""
        copy = f' TEMPLATE "{template}"' if template else ""
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"{copy}')
        return self.url(name)

    def migrated_database(self, name: str) -> str:
        """The URL of a migrated database ``name``: a copy of the migrated one this server
        keeps as a template (made on first use, by ``manage.py migrate``)."""
        if not self.template:
            from tests.servers import migrate

            migrate(self.create_database("receco_template"))
            self.template = "receco_template"
        return self.create_database(name, self.template)

    def _postmaster(self) -> int:
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def _processes(self) -> list[int]:
        """The postmaster and its children (each of which leads a process group of its own)."""
        postmaster = self._postmaster()
        children = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[1]) == postmaster:
                children.append(int(stat.parent.name))
        return [postmaster, *children]

    def pause(self) -> None:
        """Stop every process of the server (SIGSTOP): it accepts connections in the kernel
        and answers nothing, like a frozen machine."""
        for pid in self._processes():
            with contextlib.suppress(ProcessLookupError):  # a backend that ended meanwhile
                os.kill(pid, signal.SIGSTOP)

    def resume(self) -> None:
        for pid in self._processes():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)

    def stop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.resume()
        subprocess.run(
            _as_server_user([str(binaries() / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(self.folder, ignore_errors=True)


def _new_cluster() -> Cluster:
    folder = Path(tempfile.mkdtemp(prefix="receco-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
    return Cluster(folder, free_port())


def start_cluster(*, extra: tuple[str, ...] = ()) -> Cluster:
    """initdb and start a server on 127.0.0.1 and a free port (trust authentication)."""
    cluster = _new_cluster()
    bin_dir = binaries()
    initdb = [
        str(bin_dir / "initdb"),
        "-D",
        str(cluster.data),
        "-A",
        "trust",
        "-U",
        "postgres",
        "--no-sync",
        "-E",
        "UTF8",
    ]
    subprocess.run(_as_server_user(initdb), check=True, capture_output=True)
    return _start(cluster, extra)


def start_replica(primary: Cluster) -> Cluster:
    """A streaming replica of ``primary`` on a free port: pg_basebackup of its data with
    the replication settings written (-R), started as a hot standby."""
    replica = _new_cluster()
    basebackup = [
        str(binaries() / "pg_basebackup"),
        *("-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres"),
        *("-D", str(replica.data), "-R", "-X", "stream", "--no-sync", "--checkpoint=fast"),
    ]
    subprocess.run(_as_server_user(basebackup), check=True, capture_output=True)
    return _start(replica, ())


def _start(cluster: Cluster, extra: tuple[str, ...]) -> Cluster:
    folder = cluster.folder
    settings = " ".join([f"-p {cluster.port}", f"-k {folder}", "-c listen_addresses=127.0.0.1", "-c fsync=off", *extra])
    start = [
        str(binaries() / "pg_ctl"), "-D", str(cluster.data), "-o", settings, "-l", str(folder / "log"), "-w", "start"
    ]  # fmt: skip
    subprocess.run(_as_server_user(start), check=True, capture_output=True)
    deadline = time.monotonic() + 20
    while True:
        try:
            psycopg.connect(cluster.url(), connect_timeout=2).close()
            return cluster
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                cluster.stop()
                raise
            time.sleep(0.2)
