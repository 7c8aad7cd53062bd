"""The image: its HEALTHCHECK works without curl, and .dockerignore keeps what is only for
development and tests out of it. (No Docker engine here: the check's command is run as
the image would run it, and the ignore rules are read as Docker reads them.)"""

import fnmatch
import os
import re
import shlex
import subprocess
import sys
import urllib.request

import pytest

from tests.servers import ROOT, free_port


def _healthcheck_command() -> list[str]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    (command,) = re.findall(r"^HEALTHCHECK .*?\bCMD (.+)$", text, flags=re.MULTILINE)
    argv = shlex.split(command)
    assert argv[0] == "python"  # the slim image has no curl
    return [sys.executable, *argv[1:]]


def _run_check(port: int) -> subprocess.CompletedProcess:
    env = {**os.environ, "PORT": str(port)}
    return subprocess.run(_healthcheck_command(), env=env, capture_output=True, text=True, timeout=30)


def test_the_healthcheck_passes_against_the_server(served):
    # Once the worker has loaded the project (the image's start period); on a busy
    # machine that can take longer than the check's own timeout.
    urllib.request.urlopen(f"{served.url}/healthz", timeout=60).close()
    result = _run_check(served.port)
    assert result.returncode == 0, result.stderr


def test_the_healthcheck_fails_when_nothing_answers():
    result = _run_check(free_port())
    assert result.returncode == 1
    assert "Connection refused" in result.stderr


def _ignored(path: str) -> bool:
    """Whether .dockerignore leaves ``path`` out of the build context (its rules as Docker
    reads them: each matches from the context's root, ``**`` any number of folders, and a
    folder left out takes its contents with it)."""
    rules = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()]
    rules = [rule for rule in rules if rule and not rule.startswith("#")]
    parts = path.split("/")
    prefixes = ["/".join(parts[: index + 1]) for index in range(len(parts))]
    for rule in rules:
        assert not rule.startswith("!"), "exceptions are not read by this check"
        pattern = rule.removeprefix("**/")
        anywhere = rule.startswith("**/")
        for prefix in prefixes:
            candidates = (
                ["/".join(prefix.split("/")[i:]) for i in range(prefix.count("/") + 1)] if anywhere else [prefix]
            )
            if any(fnmatch.fnmatchcase(candidate, pattern) for candidate in candidates):
                return True
    return False


@pytest.mark.parametrize(
    "path",
    [
        "tests/ops/test_health.py",
        "bench/run.py",
        "node_modules/jsqr/package.json",
        "tests/clients/trpc/node_modules/@trpc/client/package.json",
        "posagent/node_modules/x/index.js",
        ".venv/bin/python",
        ".git/HEAD",
        "test-artifacts/screenshot.png",
        "receipts/__pycache__/views.cpython-311.pyc",
        "db.sqlite3",
        ".env",
    ],
)
def test_development_files_stay_out_of_the_image(path):
    assert _ignored(path)


@pytest.mark.parametrize(
    "path",
    [
        "manage.py",
        "gunicorn.conf.py",
        "requirements.txt",
        "receco/settings.py",
        "receco/ops/health.py",
        "customers/views/receipts.py",
        "templates/base.html",
        "static/vendor/jsqr/jsQR.js",
        "verifier/pyproject.toml",
        "verifier/src/receco_verify/merkle.py",
    ],
)
def test_what_the_service_runs_goes_in(path):
    assert not _ignored(path)


def test_every_local_package_requirements_txt_names_is_copied_before_it_is_installed():
    # pip reads ./verifier from the image's file system: a COPY after the install would
    # leave the build failing with "does not appear to be a Python project".
    local = [line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines() if line.startswith("./")]
    assert local == ["./verifier"]
    steps = [line.strip() for line in (ROOT / "Dockerfile").read_text().splitlines()]
    install = steps.index("RUN pip install -r requirements.txt")
    for path in local:
        name = path.removeprefix("./")
        assert f"COPY {name} ./{name}" in steps[:install]
        assert (ROOT / name / "pyproject.toml").is_file()
