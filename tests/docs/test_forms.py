"""The forms of a receipt's token and short code are declared once (receipts.codes); what
README.md and docs/ say of them is checked here against those constants."""

import re
from pathlib import Path

import pytest

from receipts.codes import SHORT_CODE_LENGTH, TOKEN_MAX_LENGTH, TOKEN_MIN_LENGTH

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# "Tokens are 8 to 64 characters", "a token (8 to 64 of …)"
_TOKEN = re.compile(r"\btokens?\b[^.;]{0,40}?\b(\d+) to (\d+) (?:characters|letters|of)\b", re.I)
# "short codes are 6 of", "6-character short code", "the 6-character code"
_SHORT_CODE = re.compile(r"short codes? (?:are|is) (\d+)\b|\b(\d+)-character (?:short )?code", re.I)


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_the_docs_state_the_declared_forms(path):
    text = " ".join(path.read_text().split())
    for match in _TOKEN.finditer(text):
        assert (int(match[1]), int(match[2])) == (TOKEN_MIN_LENGTH, TOKEN_MAX_LENGTH), match[0]
    for match in _SHORT_CODE.finditer(text):
        assert int(match[1] or match[2]) == SHORT_CODE_LENGTH, match[0]


def test_the_api_reference_states_both():
    text = " ".join((ROOT / "docs" / "api.md").read_text().split())
    assert f"Tokens are {TOKEN_MIN_LENGTH} to {TOKEN_MAX_LENGTH} characters" in text
    assert f"short codes are {SHORT_CODE_LENGTH} of" in text
