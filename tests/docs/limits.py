"""Finds the rate limits a text states, and which limit each one is of.

A statement is a count with its window, in any of the ways the docs and the OpenAPI
document write one: ``1000 per minute``, ``600 a minute``, ``20 an hour``, ``30/m``,
``1000/m,100/s``, ``30/5m``, ``"minute";q=1000;w=60``. It is attributed to the limit whose
words stand nearest to it in the same paragraph (``live key``, ``without a key``, ``find
nothing``, the setting's name, ...); a statement near none of them is reported as such, so a
new limit cannot slip into the docs without saying what it limits.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass

from receco.lib.rates import RATE_RE, parse_rate

# Words that name each limit, by its setting. The nearest one to a count wins.
WORDS = {
    "RECECO_RATELIMIT_LIVE_KEY": ["RECECO_RATELIMIT_LIVE_KEY", "live key", "live keys", "this API key",
                                  "RateLimit-Policy", "per key"],
    "RECECO_RATELIMIT_ANONYMOUS": ["RECECO_RATELIMIT_ANONYMOUS", "without a key", "without an API key",
                                   "calls without"],
    "RECECO_RATELIMIT_FAILED_LOOKUPS": ["RECECO_RATELIMIT_FAILED_LOOKUPS", "find nothing", "finds nothing",
                                        "failed look-ups", "failed lookups"],
    "RECECO_RATELIMIT_TEST_MERCHANTS": ["RECECO_RATELIMIT_TEST_MERCHANTS", "test- merchants",
                                        "new test merchants", "new `test-` merchants"],
    "RECECO_CONTACT_FORM_RATE": ["RECECO_CONTACT_FORM_RATE", "send form", "\"send\" form", "the form"],
    "RECECO_PASSWORD_RESET_RATE": ["RECECO_PASSWORD_RESET_RATE", "password reset"],
    "RECECO_WALLET_PASS_RATE": ["RECECO_WALLET_PASS_RATE", "wallet passes", "wallet pass"],
    "RECECO_LOCKER_CONTACT_RATE": ["RECECO_LOCKER_CONTACT_RATE", "one phone number or email address"],
    "RECECO_LOCKER_ADDRESS_RATE": ["RECECO_LOCKER_ADDRESS_RATE", "locker asked for from one client address"],
    "RECECO_LOCKER_EXPORT_RATE": ["RECECO_LOCKER_EXPORT_RATE", "Downloads of every receipt", "downloads of everything"],
    "RECECO_LOCKER_TEXT_RATE": ["RECECO_LOCKER_TEXT_RATE", "sign-in texts", "texts the whole service"],
    "RECECO_CALLBACK_RATE": ["RECECO_CALLBACK_RATE", "providers' callbacks", "callback URLs"],
}  # fmt: skip
_WORD_RE = re.compile("|".join(re.escape(w) for w in sorted({w for ws in WORDS.values() for w in ws}, key=len)[::-1]))
_SETTING_OF = {word: setting for setting, words in WORDS.items() for word in words}

_UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
_PROSE = re.compile(r"(?<![\w.-])(\d[\d,]*)(?: [\w`-]+){0,3}? (?:a|an|per) (?:(\d+) )?(second|minute|hour|day)s?\b")
_RATE = re.compile(r"(?<![\w/])(\d+/\d*[smhd])\b")
_POLICY = re.compile(r"q=(\d+);w=(\d+)")
_NEAR = 160  # characters either side, within the paragraph


@dataclass(frozen=True)
class Statement:
    limit: int
    window: int  # seconds
    setting: str | None  # the limit it is of; None: nothing names one nearby
    where: str  # the text around it, to show in a failure


def statements(text: str) -> Iterator[Statement]:
    """Every rate limit ``text`` states, each with the setting it is of."""
    found = []
    for paragraph in re.split(r"\n\s*\n", text):
        for match in _PROSE.finditer(paragraph):
            found.append((match, int(match[1].replace(",", "")), int(match[2] or 1) * _UNITS[match[3]]))
        for match in _RATE.finditer(paragraph):
            if RATE_RE.match(match[1]):
                rate = parse_rate(match[1])
                found.append((match, rate.limit, rate.window))
        for match in _POLICY.finditer(paragraph):
            found.append((match, int(match[1]), int(match[2])))
        for match, limit, window in found:
            yield Statement(limit, window, _nearest(paragraph, match), _around(paragraph, match))
        found = []


def _nearest(paragraph: str, match: re.Match) -> str | None:
    start, end = max(0, match.start() - _NEAR), match.end() + _NEAR
    best = None
    for word in _WORD_RE.finditer(paragraph, start, min(end, len(paragraph))):
        distance = match.start() - word.end() if word.end() <= match.start() else word.start() - match.end()
        distance = max(distance, 0)
        if best is None or distance < best[0]:
            best = (distance, _SETTING_OF[word[0]])
    return best[1] if best else None


def _around(paragraph: str, match: re.Match) -> str:
    return " ".join(paragraph[max(0, match.start() - 80) : match.end() + 80].split())
