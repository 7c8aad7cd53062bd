"""The environment of a benchmark that runs the project in its own process (bench/ledger.py,
bench/search.py): settings for a run without a server, a local-memory cache, and the
database of DATABASE_URL (SQLite in a temporary file without it; on PostgreSQL made on first
use, as a database of its own). Call ``prepare`` before django.setup()."""

import os
import secrets
import tempfile

from bench.servers import create_database


def prepare(name: str) -> None:
    """Set the environment of an in-process benchmark called ``name`` (its SQLite file's name)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "receco.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-" + secrets.token_hex(16))
    os.environ.setdefault("DJANGO_DEBUG", "false")
    os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "127.0.0.1,testserver")
    os.environ.setdefault("RECECO_WEB_URL", "http://127.0.0.1:8000")
    os.environ.setdefault("RECECO_LOCAL_CACHE", "1")
    if not os.environ.get("DATABASE_URL"):
        os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp()}/{name}-bench.sqlite3"
    if os.environ["DATABASE_URL"].startswith(("postgres://", "postgresql://")):
        create_database(os.environ["DATABASE_URL"])
