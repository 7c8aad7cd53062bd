"""The README, CONTRIBUTING and docs/ point only at what exists: every relative link at a
file (and a heading of it, by GitHub's anchors), and every repository file they cite in
`code`, such as `tests/receipts/schemas/orf-0.1.json` (or that the project makes where it
runs, which git ignores: `.keys/signing-keys.json`)."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]

_LINK = re.compile(r"\]\(([^)\s]+)\)|<img src=\"([^\"]+)\"")
_CITED = re.compile(r"`((?:[\w.-]+/)+[\w.-]+\.(?:py|json|md|txt|yaml|yml|lua|js|mjs|ts|css|html|toml|png|sh))`")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors of a Markdown file's headings."""
    text = _FENCE.sub("", path.read_text())
    anchors = set()
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        anchors.add(slug)
    return anchors


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_leads_somewhere(path):
    broken = []
    for match in _LINK.finditer(_FENCE.sub("", path.read_text())):
        target = match[1] or match[2]
        if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        resolved = (path.parent / file).resolve() if file else path
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target}: no such heading")
    assert not broken, f"{path.name}: {broken}"


def _made_here(cited: str) -> bool:
    """Whether git ignores ``cited``: a file the project makes where it runs (a development
    key), not one of the repository's."""
    return subprocess.run(["git", "check-ignore", "-q", cited], cwd=ROOT, check=False).returncode == 0


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_file_cited_exists(path):
    cited = _CITED.findall(path.read_text())
    missing = [name for name in cited if not (ROOT / name).exists() and not _made_here(name)]
    assert not missing, f"{path.name} cites {missing}"
