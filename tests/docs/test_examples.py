"""Every shell example of README.md and docs/ runs as written against what `./dev up` serves on
a fresh database, and answers as documented (tests.docs.examples says how an example and its
answer are written).

Each document gets its own `./dev up` (a free port, a fresh SQLite file: a copy of the
session's migrated one, and the demo data of seeddemo) and runs its examples in order, in
one shell, as a reader pasting them would: a `KEY=$(…)` of one example is there for the
next. Only the address is changed, from 127.0.0.1:8000 to the server's port. curl is the
system's, behind a wrapper that writes each answer's status to stderr, which the output is
not compared with. A block that documents a 429 does not start in the last seconds of a
minute, so that no per-minute window of the limits ends during it (one that shows no limit
does not wait: a wait of up to ten seconds a block cost the suite half a minute).
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests import databases
from tests.docs.examples import SERVICE, Command, examples, problems
from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [path for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))] if examples(path)]
_CURL = shutil.which("curl")


@pytest.fixture
def dev_up(tmp_path, path):
    """`./dev up` on a free port and a fresh database, as a new user starts it, once it
    serves the demo receipt, and, for a document whose examples read the receipt log,
    once its worker has logged it."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "RECECO_"))}
    env.pop("REDIS_URL", None)
    # This suite's environment stands in for .venv (the same one under ./dev test).
    # A copy of the session's migrated database (tests.databases): ./dev up's migrate then
    # has nothing to do (a fresh database's is tests/test_dev.py's), seeddemo fills it.
    database = databases.copy_sqlite(tmp_path / "db.sqlite3")
    env.update(DATABASE_URL=database, RECECO_VENV=sys.prefix, PORT=str(port))
    log = tmp_path / "dev-up.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [str(ROOT / "dev"), "up"], cwd=ROOT, env=env, stdout=output, stderr=output, start_new_session=True
        )
    try:
        reads_the_log = any(procedure in path.read_text() for procedure in _LOG)
        _wait_until_it_answers(port, process, log, _DEMO_PROOF if reads_the_log else _DEMO_RECEIPT)
        yield port, env
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # runserver and its autoreloader
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


# The demo receipt (seeddemo makes it as the server starts), and its proof: that is served
# once ./dev up's worker has appended the receipt (seconds later: the log's commit lag),
# which only the examples that read the log (getReceiptProof, getLogCheckpoint) need.
_DEMO_RECEIPT = "/api/trpc/getReceipt?input=%7B%22token%22%3A%22DEMO42%22%7D"
_DEMO_PROOF = "/api/trpc/getReceiptProof?input=%7B%22token%22%3A%22DEMO42%22%7D"
_LOG = "/api/trpc/getReceiptProof", "/api/trpc/getLogCheckpoint"


def _wait_until_it_answers(port: int, process: subprocess.Popen, log: Path, address: str) -> None:
    deadline = time.monotonic() + 180
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{address}", timeout=2):
                return
        except OSError:  # refused, or 404 until the demo receipt is made (and logged)
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"no {address} from ./dev up:\n{log.read_text()[-3000:]}") from None
            time.sleep(0.2)


# A block that reaches a limit starts no later than this second of a minute, so that a
# per-minute window of the limits does not end in the middle of it.
_LATEST_START = 50


def _reaches_a_limit(block: list[Command]) -> bool:
    return any(re.search(r"\b429\b", command.documented) for command in block)


def _script(blocks: list[list[Command]], port: int, out: Path) -> str:
    lines = ["cd " + str(ROOT)]
    number = 0
    for block in blocks:
        if _reaches_a_limit(block):
            lines.append(
                f'second=$(date +%S); second=${{second#0}}; [ "$second" -le {_LATEST_START} ] || sleep $((61 - second))'
            )
        for command in block:
            lines += [
                "{ " + command.text.replace(SERVICE, f"http://127.0.0.1:{port}"),
                f"}} >{out}/{number}.out 2>{out}/{number}.err; echo $? >{out}/{number}.rc",
            ]
            number += 1
    return "\n".join(lines) + "\n"


@pytest.mark.skipif(_CURL is None, reason="needs curl, as the examples do")
@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_example_answers_as_documented(path, dev_up, tmp_path):
    port, env = dev_up
    blocks = examples(path)
    commands = [command for block in blocks for command in block]
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "curl").write_text(f"#!/bin/sh\nexec {_CURL} --write-out '%{{stderr}}%{{http_code}}\\n' \"$@\"\n")
    (shim / "curl").chmod(0o755)
    out = tmp_path / "out"
    out.mkdir()
    script = tmp_path / "examples.sh"
    script.write_text(_script(blocks, port, out))
    env = {**env, "PATH": f"{shim}{os.pathsep}{env['PATH']}"}
    subprocess.run(["bash", str(script)], env=env, timeout=600, check=True)

    failures = []
    for number, command in enumerate(commands):
        output = (out / f"{number}.out").read_text()
        errors = (out / f"{number}.err").read_text()
        statuses = [line for line in errors.splitlines() if line.isdigit() and len(line) == 3]
        status = int(statuses[-1]) if statuses else None
        code = int((out / f"{number}.rc").read_text())
        for problem in problems(command, port, output, errors, status, code):
            failures.append(f"{path.name}:{command.line}: {command.text.splitlines()[0][:100]}\n  {problem}")
    assert not failures, "\n\n".join(failures)
