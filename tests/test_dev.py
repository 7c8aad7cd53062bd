"""./dev manage: any management command in the project's environment, with the
development settings of ./dev up, as the README's examples run it."""

import os
import re
import subprocess
import sys
from pathlib import Path

from tests import databases

ROOT = Path(__file__).resolve().parents[1]


def _dev(*args: str, database_url: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "RECECO_"))}
    env.pop("REDIS_URL", None)
    # This suite's own environment stands in for .venv (the same one under ./dev test).
    env.update(DATABASE_URL=database_url, RECECO_VENV=sys.prefix)
    return subprocess.run(
        [str(ROOT / "dev"), "manage", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_dev_manage_runs_the_readmes_commands_without_a_secret_key_or_redis(tmp_path):
    database_url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    assert _dev("migrate", "--no-input", "-v", "0", database_url=database_url).returncode == 0
    assert _dev("seeddemo", database_url=database_url).returncode == 0
    result = _dev("createapikey", "demo-shop", "--type", "live", "--name", "Till 1", database_url=database_url)
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"poslive_\S+\n", result.stdout)


def test_dev_manage_passes_a_failing_commands_message_and_status_on(tmp_path):
    database_url = databases.copy_sqlite(tmp_path / "db.sqlite3")  # migrated (the test above migrates one)
    result = _dev("createapikey", "no-such-shop", "--type", "live", database_url=database_url)
    assert result.returncode == 1
    assert result.stderr == "CommandError: No merchant with id 'no-such-shop'\n"
