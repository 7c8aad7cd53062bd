"""How long `./dev up` takes to its first page, and where the time goes: on a fresh clone
(no .venv, no database: a newcomer's first start) and on the starts after it.

    python bench/devup.py                 # a fresh `git clone` of HEAD, started 2 times
    python bench/devup.py --starts 3      # and a third
    python bench/devup.py --commit main   # a fresh clone of main (before a change)
    python bench/devup.py --here          # this checkout as it is (its .venv, its db.sqlite3)

Each start runs ./dev up traced (bash's set -x) with a timestamp on every traced command (PS4), so the
phases are the commands ./dev up runs: checking the environment (Python, the stamps), making
the virtual environment, pip, migrate, the signing key, seeddemo, then the server until
`GET /` answers 200 (polled every 50 ms). pip uses its cache as this machine has it (say
which when you publish a figure: a newcomer's is empty). The clone is removed at the end
unless --keep. Figures: docs/benchmarks.md, "./dev up".
"""

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The first traced command of each phase, in the order ./dev up runs them.
PHASES = [
    ("venv", re.compile(r" -m venv ")),
    ("pip", re.compile(r" -m pip install ")),
    ("setupdev", re.compile(r"manage\.py setupdev")),  # the signing key, migrate, seeddemo
    # (before setupdev, ./dev up ran them one by one)
    ("migrate", re.compile(r"manage\.py migrate")),
    ("signing key", re.compile(r"manage\.py makesigningkey")),
    ("seed", re.compile(r"manage\.py seeddemo")),
    ("server to first page", re.compile(r"manage\.py runserver")),
]
TRACE = re.compile(r"^\++T(\d+\.\d+) (.*)$")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(folder: Path) -> tuple[float, float, list[tuple[str, float]]]:
    """One `./dev up` in ``folder`` until its first page: the seconds it took, the CPU
    seconds of all its processes, and each phase's seconds."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "RECECO_"))}
    for name in ("DATABASE_URL", "REDIS_URL", "VIRTUAL_ENV"):
        env.pop(name, None)
    env["PORT"] = str(port)
    trace = folder / f"devup-{port}.log"
    began = time.time()
    with trace.open("wb") as output:
        process = subprocess.Popen(
            # (bash takes no PS4 from the environment when run as root)
            ["bash", "-c", "PS4='+T${EPOCHREALTIME} '; set -x; . ./dev \"$@\"", "./dev", "up"],
            cwd=folder,
            env=env,
            stdout=output,
            stderr=output,
            start_new_session=True,
        )
    try:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None:
                raise SystemExit(f"./dev up ended:\n{trace.read_text()[-3000:]}")
            time.sleep(0.05)
        served = time.time()
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        while (ended := os.wait4(process.pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        if ended[0] == 0:
            os.killpg(process.pid, signal.SIGKILL)
            ended = os.wait4(process.pid, 0)
        process.returncode = ended[1]
    cpu = ended[2].ru_utime + ended[2].ru_stime
    starts = {}
    for line in trace.read_text().splitlines():
        if match := TRACE.match(line):
            for name, pattern in PHASES:
                if name not in starts and pattern.search(match[2]):
                    starts[name] = float(match[1])
    marks = [("environment check", began), *sorted(starts.items(), key=lambda item: item[1]), ("", served)]
    phases = [(name, following - at) for (name, at), (_, following) in zip(marks, marks[1:], strict=False)]
    return served - began, cpu, phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--starts", type=int, default=2, help="starts in a row (default 2: a first and a second)")
    parser.add_argument("--here", action="store_true", help="start this checkout as it is, not a fresh clone")
    parser.add_argument("--commit", default="HEAD", help="the commit to clone (default HEAD; main: before a change)")
    parser.add_argument("--keep", action="store_true", help="keep the clone")
    options = parser.parse_args()
    if options.here:
        folder = ROOT
    else:
        folder = Path(tempfile.mkdtemp(prefix="receco-devup-")) / "receco"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(folder)], check=True)
        subprocess.run(["git", "checkout", "--quiet", options.commit], cwd=folder, check=True)
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=folder, capture_output=True, text=True)
        print(f"A fresh clone of {commit.stdout.strip()} in {folder}")
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    try:
        for number in range(1, options.starts + 1):
            total, cpu, phases = start(folder)
            print(f"start {number}: first page after {total:.1f} s ({cpu:.1f} CPU s), load {os.getloadavg()[0]:.0f}")
            for name, seconds in phases:
                print(f"  {name:<22}{seconds:6.1f} s")
    finally:
        if not options.here and not options.keep:
            shutil.rmtree(folder.parent)


if __name__ == "__main__":
    main()
