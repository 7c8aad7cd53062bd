"""./dev manage: any management command in the project's environment, with the
development settings of ./dev up, as the README's examples run it."""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests import databases
from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[1]


def _dev(*args: str, database_url: str, **extra: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "RECECO_"))}
    env.pop("REDIS_URL", None)
    # This suite's own environment stands in for .venv (the same one under ./dev test).
    env.update(DATABASE_URL=database_url, RECECO_VENV=sys.prefix, **extra)
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


def test_dev_keeps_the_bytecode_cache_in_the_environment_even_where_the_machine_says_write_none(tmp_path, monkeypatch):
    """Each process ./dev starts reads what an earlier one compiled, from .venv, never
    beside the sources: with PYTHONDONTWRITEBYTECODE set, every server, worker and command
    of the suite compiled Django and the project again."""
    database_url = databases.copy_sqlite(tmp_path / "db.sqlite3")
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)  # (./dev test sets it)
    code = "import sys; print(sys.pycache_prefix, sys.dont_write_bytecode)"
    result = _dev("shell", "-v", "0", "-c", code, database_url=database_url, PYTHONDONTWRITEBYTECODE="1")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{sys.prefix}/pycache False\n"


# --- ./dev up: the server, the task worker and the periodic jobs --------------------------


def _dev_up_environment(tmp_path, port: int) -> dict:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "RECECO_"))}
    env.pop("REDIS_URL", None)
    # A copy of the session's migrated database: seeddemo fills it as on a first start.
    env.update(DATABASE_URL=databases.copy_sqlite(tmp_path / "db.sqlite3"), RECECO_VENV=sys.prefix, PORT=str(port))
    return env


@contextlib.contextmanager
def _dev_up(tmp_path, **extra: str):
    """`./dev up` on a free port, in a session of its own (as a terminal's foreground job);
    yields its process, its port, its environment and its log."""
    port = free_port()
    env = {**_dev_up_environment(tmp_path, port), **extra}
    log = tmp_path / f"dev-up-{port}.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [str(ROOT / "dev"), "up"], cwd=ROOT, env=env, stdout=output, stderr=output, start_new_session=True
        )
    try:
        deadline = time.monotonic() + 180
        while not _answers(f"http://127.0.0.1:{port}/healthz"):
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"./dev up did not serve:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        yield process, port, env, log
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5):
            return True
    except OSError:
        return False


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def _commands_of_group(group: int) -> list[str]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == group and fields[0] != "Z":
                found.append((stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip())
    return found


def _stopped(process: subprocess.Popen, deadline: float = 60) -> bool:
    """Whether ./dev up and every process it started have ended, waiting up to ``deadline``."""
    end = time.monotonic() + deadline
    process.wait(timeout=deadline)
    while _group_alive(process.pid) and time.monotonic() < end:
        time.sleep(0.1)
    return not _group_alive(process.pid)


def test_dev_up_runs_the_task_worker_and_the_periodic_jobs_so_a_sale_is_verified_within_seconds(tmp_path):
    with _dev_up(tmp_path) as (process, port, env, log):
        commands = _commands_of_group(process.pid)
        assert any("manage.py db_worker" in command for command in commands), commands
        assert any("manage.py runscheduler" in command for command in commands), commands
        made = subprocess.run(
            [str(ROOT / "dev"), "manage", "createapikey", "demo-shop", "--type", "live"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        sale = json.dumps(
            {
                "merchant_string_id": "demo-shop",
                "total_amount": 2500,
                "items": [{"name": "Tea", "quantity": 1, "unit_price": 2500, "total_price": 2500}],
            }
        ).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/trpc/createReceiptFromPOS",
            data=sale,
            headers={"Authorization": f"Bearer {made.stdout.strip()}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            receipt_url = json.load(response)["result"]["data"]["receipt_url"]
        sold = time.monotonic()
        # Well over the 15 s the service aims at: this checks that it happens, the figure
        # printed says how soon.
        deadline = sold + 90
        while True:
            with urllib.request.urlopen(receipt_url, timeout=30) as response:
                page = response.read().decode()
            if "Verified receipt" in page:
                break
            assert "Being verified" in page
            assert time.monotonic() < deadline, f"not verified after 90 s:\n{log.read_text()[-3000:]}"
            time.sleep(0.2)
        print(f"\nA sale at ./dev up was verified on its page {time.monotonic() - sold:.1f} s after it")


@pytest.mark.parametrize(
    ("how", "signal_number"),
    [("the script", signal.SIGTERM), ("the group", signal.SIGINT), ("the script", signal.SIGHUP)],
    ids=["sigterm", "ctrl-c", "sighup"],
)
def test_dev_up_stops_with_every_process_it_started(tmp_path, how, signal_number):
    with _dev_up(tmp_path) as (process, _port, _env, log):
        assert len(_commands_of_group(process.pid)) >= 5  # the script, three commands, the reloaders' children
        if how == "the group":  # Ctrl-C: the terminal signals its foreground job, every process of it
            os.killpg(process.pid, signal_number)
        else:  # kill <pid>, a service manager, a terminal closed
            process.send_signal(signal_number)
        assert _stopped(process), _commands_of_group(process.pid)
    assert process.returncode == 128 + signal_number, log.read_text()[-3000:]


def _venv_noting_pip(tmp_path) -> Path:
    """A virtual environment for ./dev but for pip: its python is this suite's, its pip only
    notes what it is asked to install (in pip.log), so that the suite's own is left as it is."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(
        f'#!/bin/sh\nif [ "$1 $2" = "-m pip" ]; then shift 2; echo "$*" >>{venv}/pip.log; exit 0; fi\n'
        f'exec {sys.executable} "$@"\n'
    )
    python.chmod(0o755)
    (venv / "pip.log").touch()
    return venv


def test_dev_test_beside_dev_up_reinstalls_nothing_the_server_runs_and_a_second_start_runs_no_pip(tmp_path):
    venv = _venv_noting_pip(tmp_path)
    pip = "install --quiet --disable-pip-version-check --no-compile"
    with _dev_up(tmp_path, RECECO_VENV=str(venv)) as (_process, _port, env, _log):
        assert (venv / "pip.log").read_text().splitlines() == [
            f"{pip} -r {venv}/.requirements-requirements.txt",  # Django and the rest, from the index
            f"{pip} ./verifier",
        ]
        tested = subprocess.run(
            [str(ROOT / "dev"), "test", "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider", __file__],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert tested.returncode == 0, tested.stdout + tested.stderr
        # Rebuilding ./verifier, which the server imports, rewrote its files in the environment:
        # the server's autoreloader restarted it.
        assert (venv / "pip.log").read_text().splitlines()[2:] == [
            f"{pip} -r {venv}/.requirements-requirements-dev.txt",
            f"{pip} -e ./posagent",
        ]
    with _dev_up(tmp_path, RECECO_VENV=str(venv)):
        assert len((venv / "pip.log").read_text().splitlines()) == 4  # a second start: nothing to install
