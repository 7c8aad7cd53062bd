"""The README, CONTRIBUTING and docs/ point only at what exists: every relative link at a
file (and a heading of it, by GitHub's anchors), and every repository file they cite in
`code`, such as `tests/receipts/schemas/orf-0.1.json`."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
# Written on another branch of this change (the architecture's own), linked from here already.
ELSEWHERE = {ROOT / "docs" / "architecture.md"}

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
        if resolved in ELSEWHERE:
            continue
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target}: no such heading")
    assert not broken, f"{path.name}: {broken}"


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_file_cited_exists(path):
    missing = [cited for cited in _CITED.findall(path.read_text()) if not (ROOT / cited).exists()]
    assert not missing, f"{path.name} cites {missing}"
