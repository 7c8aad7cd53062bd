"""Rates such as ``1000/m``, ``100/s`` or ``30/5m``: the one grammar of every limit in the
settings (count, a slash, an optional multiplier and a unit: s, m, h or d)."""

import functools
import re
from dataclasses import dataclass

RATE_RE = re.compile(r"^(?P<limit>[1-9]\d*)/(?P<multiplier>[1-9]\d*)?(?P<unit>[smhd])$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_WINDOW_NAMES = {1: "second", 60: "minute", 3600: "hour", 86400: "day"}


@dataclass(frozen=True)
class Rate:
    """At most ``limit`` per ``window`` seconds; ``text`` as it was written."""

    text: str
    limit: int
    window: int

    @property
    def name(self) -> str:
        """The window's name in the RateLimit headers: "minute", or "300s"."""
        return _WINDOW_NAMES.get(self.window, f"{self.window}s")

    def describe(self) -> str:
        """``1000 per minute``, ``30 per 300 seconds``."""
        return f"{self.limit} per {_WINDOW_NAMES.get(self.window, f'{self.window} seconds')}"


@functools.lru_cache(maxsize=64)  # read from the settings on every call
def parse_rate(text: str) -> Rate:
    """Read ``1000/m``, ``100/s``, ``5000/h``, ``30/5m``; raise ValueError otherwise."""
    match = RATE_RE.match(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a rate such as 1000/m, 100/s or 30/5m")
    window = int(match["multiplier"] or 1) * _UNIT_SECONDS[match["unit"]]
    return Rate(text.strip(), int(match["limit"]), window)
