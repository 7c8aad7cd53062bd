"""docs/configuration.md lists every environment variable the project reads outside
tests/: the settings and every other module (each `env*("NAME"` and `os.environ` read), the
agent's settings table, and the `${NAME:-default}` reads of ./dev and .ci/run. A variable
read and not listed, or listed and read nowhere, fails here."""

import re
from pathlib import Path

from receco_agent import config as agent_config

ROOT = Path(__file__).resolve().parents[2]
_SKIPPED = {".venv", "venv", "node_modules", "tests", "migrations", ".git", "staticfiles", "test-artifacts"}
_PYTHON_READS = re.compile(
    r"""(?:\bos\.environ(?:\.get|\.setdefault|\.pop)?\(|\bos\.getenv\(|\benv\w*\(|\benv\.get\()\s*['"]([A-Z][A-Z0-9_]+)['"]"""
    r"""|\b(?:os\.environ|env)\[\s*['"]([A-Z][A-Z0-9_]+)['"]\s*\]"""
)
_SHELL_READS = re.compile(r"\$\{([A-Z][A-Z0-9_]*)(?::?-[^}]*)?\}")
_LISTED = re.compile(r"^\|\s*(`[A-Z][A-Z0-9_]*`(?:,\s*`[A-Z][A-Z0-9_]*`)*)\s*\|", re.M)


def _python_files():
    for path in ROOT.rglob("*.py"):
        if not _SKIPPED.intersection(path.relative_to(ROOT).parts[:-1]):
            yield path


def read_variables() -> dict[str, str]:
    """Each variable the code reads, and one place that reads it."""
    found = {}
    for path in _python_files():
        for match in _PYTHON_READS.finditer(path.read_text()):
            found.setdefault(match[1] or match[2], str(path.relative_to(ROOT)))
    for script in ("dev", ".ci/run"):
        for match in _SHELL_READS.finditer((ROOT / script).read_text()):
            found.setdefault(match[1], script)
    # The agent reads its settings from a table, not one call per name.
    for field in agent_config.FIELDS:
        found.setdefault(field.env, "posagent/src/receco_agent/config.py")
    found.setdefault(agent_config.HOME_ENV, "posagent/src/receco_agent/config.py")
    return found


def listed_variables() -> set[str]:
    text = (ROOT / "docs" / "configuration.md").read_text()
    return {name.strip("` ") for cell in _LISTED.findall(text) for name in cell.split(",")}


def test_the_finder_sees_the_reads_of_each_kind():
    found = read_variables()
    assert found["DJANGO_DEBUG"] == "receco/settings.py"  # envbool("…")
    assert found["WEB_CONCURRENCY"] == "gunicorn.conf.py"  # os.environ.get('…')
    assert found["DRAIN_AGENT_LOG"] == "bench/drain.py"  # os.environ["…"]
    assert found["RECECO_VENV"] == "dev"  # ${…:-…}
    assert found["XDG_CONFIG_HOME"].startswith("posagent/")  # env.get("…") of a mapping handed in
    assert found["RECECO_AGENT_PORT"].startswith("posagent/")  # the agent's table
    assert "QUERY_STRING" not in found  # a WSGI environ, not the process's


def test_every_variable_read_is_listed():
    missing = {name: where for name, where in read_variables().items() if name not in listed_variables()}
    assert not missing, f"read but not in docs/configuration.md: {missing}"


def test_every_variable_listed_is_read():
    stale = listed_variables() - set(read_variables())
    assert not stale, f"in docs/configuration.md but read nowhere: {sorted(stale)}"


def test_each_variable_of_the_service_is_listed_once():
    """The service's tables name each variable once (the POS agent's, a program of its
    own, shares RECECO_WEB_URL's name)."""
    text = (ROOT / "docs" / "configuration.md").read_text().split("\n## The POS agent\n")[0]
    names = [name.strip("` ") for cell in _LISTED.findall(text) for name in cell.split(",")]
    assert [name for name in set(names) if names.count(name) > 1] == []
