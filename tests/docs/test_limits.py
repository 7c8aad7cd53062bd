"""The rate limits are declared once, by the settings (receco/settings.py): admission and
the send form read them there, the served OpenAPI document is made from them, and every
limit README.md and docs/ state is checked here against them (tests.docs.limits finds
each statement and the limit it is of)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from receco.lib.rates import parse_rate
from tests.docs.limits import WORDS, statements

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SETTINGS = list(WORDS)


def _rates(value) -> set[tuple[int, int]]:
    return {(rate.limit, rate.window) for rate in map(parse_rate, [value] if isinstance(value, str) else value)}


@pytest.fixture(scope="module")
def defaults() -> dict[str, set[tuple[int, int]]]:
    """Each limit's setting as receco/settings.py declares it when nothing overrides it."""
    env = {"PATH": os.environ.get("PATH", ""), "DJANGO_DEBUG": "1"}
    script = (
        f"import json; from receco import settings; print(json.dumps({{n: getattr(settings, n) for n in {SETTINGS}}}))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return {name: _rates(value) for name, value in json.loads(completed.stdout).items()}


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_limit_the_docs_state_is_the_settings(path, defaults):
    for said in statements(path.read_text()):
        assert said.setting is not None, f"{path.name}: a limit that names nothing it limits: …{said.where}…"
        assert (said.limit, said.window) in defaults[said.setting], (
            f"{path.name} states {said.limit} per {said.window} s for {said.setting}, which declares "
            f"{sorted(defaults[said.setting])}: …{said.where}…"
        )


def test_the_configuration_states_every_limit(defaults):
    stated = {}
    for said in statements((ROOT / "docs" / "configuration.md").read_text()):
        stated.setdefault(said.setting, set()).add((said.limit, said.window))
    assert stated == defaults


def _descriptions(node) -> list[str]:
    if isinstance(node, dict):
        return [t for key, value in node.items() for t in ([value] if key == "description" else _descriptions(value))]
    if isinstance(node, list):
        return [text for value in node for text in _descriptions(value)]
    return []


def _served(client) -> dict[str, set[tuple[int, int]]]:
    stated = {}
    text = "\n\n".join(_descriptions(json.loads(client.get("/api/openapi.json").content)))
    for said in statements(text):
        assert said.setting is not None, f"a limit that names nothing it limits: …{said.where}…"
        stated.setdefault(said.setting, set()).add((said.limit, said.window))
    return stated


def test_the_served_document_states_the_limits_the_settings_declare(client, settings):
    pages = {"RECECO_CONTACT_FORM_RATE", "RECECO_PASSWORD_RESET_RATE"}  # limits of pages, not of the API
    declared = {name: _rates(getattr(settings, name)) for name in SETTINGS if name not in pages}
    assert _served(client) == declared


def test_the_served_document_follows_the_settings_when_they_change(client, settings):
    _served(client)  # made once with the settings as they were
    settings.RECECO_RATELIMIT_LIVE_KEY = ["7/m", "3/s"]
    settings.RECECO_RATELIMIT_ANONYMOUS = ["11/m"]
    settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "13/5m"
    settings.RECECO_RATELIMIT_TEST_MERCHANTS = "17/d"
    assert _served(client) == {
        "RECECO_RATELIMIT_LIVE_KEY": {(7, 60), (3, 1)},
        "RECECO_RATELIMIT_ANONYMOUS": {(11, 60)},
        "RECECO_RATELIMIT_FAILED_LOOKUPS": {(13, 300)},
        "RECECO_RATELIMIT_TEST_MERCHANTS": {(17, 86400)},
    }
