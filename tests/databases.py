"""Databases for the processes tests start (gunicorn, the task worker, management commands):
each a copy of one migrated template, made once a session, instead of a ``manage.py
migrate`` of its own (several seconds each, and a score of them a pass).

The template of a kind is made on first use, by ``manage.py migrate`` with the servers'
settings, exactly as a server's database was made before: a SQLite file in the session's
temporary folder, and on PostgreSQL a database on the suite's server named after the
suite's (``test_<name>[_gwN]_template``). A copy is SQLite's backup of that file into the
test's own, or ``CREATE DATABASE … TEMPLATE`` (a fraction of a second); the copies and the
templates on PostgreSQL are dropped when the session ends (tests/conftest.py).

Each xdist worker is a session of its own, with its own templates.
"""

import contextlib
import itertools
import os
import sqlite3
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

_lock = threading.Lock()
_folder: Path | None = None  # the session's temporary folder (set by tests/conftest.py)
_templates: dict[str, str] = {}  # kind -> URL of its template
_made: list[str] = []  # URLs of the PostgreSQL databases made, templates included
_numbers = itertools.count(1)


def start_session(folder: Path) -> None:
    """Where this session keeps its SQLite template (tests/conftest.py calls it)."""
    global _folder
    _folder = folder


def suite_url() -> str:
    """The database URL the suite runs on (DATABASE_URL; SQLite without it)."""
    return os.environ.get("DATABASE_URL") or "sqlite://"


def is_postgres(url: str) -> bool:
    return urlsplit(url).scheme in ("postgres", "postgresql")


def sqlite_path(url: str) -> Path | None:
    """The file of a ``sqlite:///<path>`` URL (None for any other URL)."""
    return Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:///") else None


def _prefix() -> str:
    """``test_<name of DATABASE_URL's database>``, and the xdist worker's id: the start of
    every database the session makes on PostgreSQL, as pytest-django's own test database."""
    name = urlsplit(suite_url()).path.strip("/")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return f"test_{name}_{worker}" if worker else f"test_{name}"


def _named(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))


def _admin(url: str):
    """An autocommit connection to ``url``'s server, to make and drop databases there."""
    import psycopg

    return psycopg.connect(_named(url, "postgres"), autocommit=True)


def _migrate(url: str) -> None:
    from tests.servers import manage

    manage(url, "migrate", "--no-input", "-v", "0")


def template(kind: str) -> str:
    """The URL of this session's migrated template of ``kind`` ("sqlite" or "postgres"),
    made on first use."""
    with _lock:
        if kind not in _templates:
            if kind == "sqlite":
                path = (_folder or Path(tempfile.mkdtemp(prefix="receco-tests-"))) / "template.sqlite3"
                path.unlink(missing_ok=True)
                url = f"sqlite:///{path}"
                _migrate(url)
                # One file, with nothing left in a write-ahead log, for a plain copy to be whole.
                with contextlib.closing(sqlite3.connect(path)) as connection:
                    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                    connection.execute("PRAGMA journal_mode=DELETE")
            else:
                url = _named(suite_url(), f"{_prefix()}_template")
                _create(url)
                _migrate(url)
            _templates[kind] = url
        return _templates[kind]


def _create(url: str, template_url: str | None = None) -> None:
    """Make the PostgreSQL database ``url`` names, empty or a copy of ``template_url``'s,
    replacing one a killed run left behind."""
    name = urlsplit(url).path.strip("/")
    source = f' TEMPLATE "{urlsplit(template_url).path.strip("/")}"' if template_url else ""
    with _admin(url) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"{source}')
    _made.append(url)


def copy_sqlite(path: Path) -> str:
    """Fill the SQLite file ``path`` with a copy of the migrated template; its URL."""
    path.unlink(missing_ok=True)
    source = sqlite_path(template("sqlite"))
    with contextlib.closing(sqlite3.connect(source)) as origin, contextlib.closing(sqlite3.connect(path)) as target:
        origin.backup(target)
    return f"sqlite:///{path}"


def fresh(folder: Path, name: str = "db") -> str:
    """A migrated database of the suite's kind, a copy of the template, for processes the
    test starts: ``folder/<name>.sqlite3`` on SQLite, a database of its own on PostgreSQL
    (dropped at the session's end). Its URL."""
    if not is_postgres(suite_url()):
        return copy_sqlite(folder / f"{name}.sqlite3")
    url = _named(suite_url(), f"{_prefix()}_{name}_{next(_numbers)}")
    _create(url, template("postgres"))
    return url


def copy_postgres(url: str) -> None:
    """Make the PostgreSQL database ``url`` (on the suite's server) a copy of the template,
    unless it exists: a database kept from run to run, as the benchmarks' are."""
    name = urlsplit(url).path.strip("/")
    with _admin(url) as admin:
        if admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            return
    source = urlsplit(template("postgres")).path.strip("/")
    with _admin(url) as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{source}"')


def end_session() -> None:
    """Drop the PostgreSQL databases this session made (their servers have stopped)."""
    with _lock:
        for url in reversed(_made):
            with contextlib.suppress(Exception), _admin(url) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{urlsplit(url).path.strip("/")}" WITH (FORCE)')
        _made.clear()
        _templates.clear()
