"""Where a POS answer's time goes: per-phase timestamps, off unless RECECO_AGENT_TIMINGS is set.

With ``RECECO_AGENT_TIMINGS=<file>`` the agent appends one JSON line per POS request to the
file: its token, and for each phase the moment it ended (``time.monotonic()``, which on
Linux is one clock for every process, so a POS's own timestamps can be set beside them),
with the thread's time on a CPU and waiting for one (the kernel's schedstat, Linux only)
so far. A phase's wall time minus both is time the thread slept: waiting for a lock, the
interpreter lock, or the disk. The drain writes lines of its own for its spans that can
hold a POS answer back (``kind: "drain"``). Nothing is recorded when the variable is unset.
"""

import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_local = threading.local()
_file_lock = threading.Lock()


def _path() -> str | None:
    return os.environ.get("RECECO_AGENT_TIMINGS") or None


def enabled() -> bool:
    """Whether timings are recorded (RECECO_AGENT_TIMINGS is set)."""
    return _path() is not None


def _schedstat() -> tuple[int, int]:
    """(ns on a CPU, ns waiting in the run queue) of the calling thread; (0, 0) where unknown."""
    try:
        with open("/proc/thread-self/schedstat") as stat:
            on_cpu, waiting, _ = stat.read().split()
        return int(on_cpu), int(waiting)
    except (OSError, ValueError):
        return 0, 0


def _point(name: str) -> list:
    on_cpu, waiting = _schedstat()
    return [name, time.monotonic(), on_cpu, waiting]


def begin(accepted: float | None = None) -> None:
    """Start recording this thread's request (``accepted``: when its connection was accepted)."""
    if _path() is None:
        return
    points = [["accepted", accepted, None, None]] if accepted is not None else []
    points.append(_point("thread"))
    _local.points = points
    _local.token = None


def mark(name: str) -> None:
    """Record that this thread's request finished the phase ``name``."""
    points = getattr(_local, "points", None)
    if points is not None:
        points.append(_point(name))


def token(value: str) -> None:
    """Name the request's sale (to join the line with the POS's own timestamps)."""
    if getattr(_local, "points", None) is not None:
        _local.token = value


def end() -> None:
    """Write this thread's request as a line of the file and stop recording it."""
    points = getattr(_local, "points", None)
    if points is None:
        return
    _local.points = None
    _write({"kind": "pos", "token": _local.token, "points": points + [_point("sent")]})


@contextmanager
def span(name: str, **detail) -> Iterator[None]:
    """Record a span of the drain's (``name``) with its start, end and this thread's CPU."""
    if _path() is None:
        yield
        return
    start = _point("start")
    try:
        yield
    finally:
        _write({"kind": "drain", "name": name, "thread": threading.current_thread().name, **detail,
                "start": start, "end": _point("end")})  # fmt: skip


def _write(line: dict) -> None:
    path = _path()
    if path is None:
        return
    text = json.dumps(line, separators=(",", ":")) + "\n"
    with _file_lock, Path(path).open("a") as out:
        out.write(text)
