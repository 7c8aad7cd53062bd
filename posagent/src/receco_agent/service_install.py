"""Running the agent as an operating-system service: a systemd unit on Linux, a launchd
job on macOS, a Windows service through pywin32. Each action is first made into a plan of
steps (files to write or remove, commands to run, Windows API calls), which ``--dry-run``
prints and a real run carries out in order."""

import getpass
import os
import plistlib
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from receco_agent.config import HOME_ENV, WINDOWS_SERVICE, Settings

ACTIONS = ("install", "start", "stop", "uninstall")
PLATFORMS = ("linux", "macos", "windows")
UNIT_NAME = "receco-agent.service"
LAUNCHD_LABEL = "com.receco.agent"
# The agent may need up to the upload timeout (15 s) to finish the upload in flight.
STOP_TIMEOUT_SECONDS = 30


class ServiceError(Exception):
    """A service action cannot be done here; the message says why and what to do."""


@dataclass
class Step:
    """One thing to do: write or remove a file, run a command, or call a function."""

    description: str
    argv: list[str] | None = None
    write: tuple[Path, str] | None = None
    remove: Path | None = None
    call: Callable[[], None] | None = None
    check: bool = True


@dataclass
class Plan:
    """The steps of one action, with notes for the person running it."""

    steps: list[Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def current_platform() -> str:
    """Return 'linux', 'macos' or 'windows' for this machine."""
    if sys.platform.startswith("linux"):
        return "linux"
    if sys.platform == "darwin":
        return "macos"
    if sys.platform == "win32":
        return "windows"
    raise ServiceError(
        f"no service support for platform {sys.platform}; run 'receco-agent start' from your own supervisor"
    )


def agent_command(python: str | None = None) -> list[str]:
    """Return the command line that starts the agent with this installation's interpreter."""
    return [python or sys.executable, "-m", "receco_agent", "start"]


def _systemd_quote(word: str) -> str:
    if word and all(c.isalnum() or c in "/._-+=:@" for c in word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_unit(settings: Settings, command: list[str], system: bool, user: str | None = None) -> str:
    """Return the text of the systemd unit that runs ``command`` for ``settings.home``."""
    lines = [
        "[Unit]",
        "Description=Receco POS agent (digital receipts, offline queue)",
        "After=network-online.target",
        "Wants=network-online.target",
        "",
        "[Service]",
        "Type=simple",
    ]
    if system:
        lines.append(f"User={user or getpass.getuser()}")
    lines += [
        "Environment=" + _systemd_quote(f"{HOME_ENV}={settings.home}"),
        "Environment=PYTHONUNBUFFERED=1",
        "ExecStart=" + " ".join(_systemd_quote(word) for word in command),
        "Restart=on-failure",
        "RestartSec=5",
        "KillSignal=SIGTERM",
        f"TimeoutStopSec={STOP_TIMEOUT_SECONDS}",
        "",
        "[Install]",
        "WantedBy=" + ("multi-user.target" if system else "default.target"),
        "",
    ]
    return "\n".join(lines)


def launchd_plist(settings: Settings, command: list[str], system: bool, user: str | None = None) -> str:
    """Return the launchd property list that runs ``command`` for ``settings.home``."""
    job = {
        "Label": LAUNCHD_LABEL,
        "ProgramArguments": command,
        "EnvironmentVariables": {HOME_ENV: str(settings.home), "PYTHONUNBUFFERED": "1"},
        "RunAtLoad": True,
        # Restart after a crash, not after a clean stop.
        "KeepAlive": {"SuccessfulExit": False},
        "ExitTimeOut": STOP_TIMEOUT_SECONDS,
        "StandardOutPath": str(settings.home / "agent.log"),
        "StandardErrorPath": str(settings.home / "agent.log"),
        "WorkingDirectory": str(settings.home),
    }
    if system:
        job["UserName"] = user or getpass.getuser()
    return plistlib.dumps(job).decode("utf-8")


def _run_step(step: Step) -> None:
    if step.write is not None:
        path, text = step.write
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        os.chmod(path, 0o644)
    if step.remove is not None:
        step.remove.unlink(missing_ok=True)
    if step.argv is not None:
        try:
            result = subprocess.run(step.argv, check=False, capture_output=True, text=True, timeout=60)  # noqa: S603 (fixed systemctl/launchctl argv)
        except FileNotFoundError:
            raise ServiceError(f"{step.argv[0]} is not installed here; cannot {step.description}") from None
        if step.check and result.returncode != 0:
            detail = (result.stderr or result.stdout).strip()
            raise ServiceError(f"'{shlex.join(step.argv)}' failed (exit {result.returncode}): {detail}")
    if step.call is not None:
        step.call()


def _linux(action: str, settings: Settings, system: bool, command: list[str], env: dict) -> Plan:
    if system:
        unit_dir = Path("/etc/systemd/system")
        ctl = ["systemctl"]
    else:
        config_home = Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config")
        unit_dir = config_home / "systemd" / "user"
        ctl = ["systemctl", "--user"]
    unit = unit_dir / UNIT_NAME
    plan = Plan()
    if action == "install":
        plan.steps += [
            Step(
                f"write the systemd unit {unit}",
                write=(unit, systemd_unit(settings, command, system)),
            ),
            Step("reload systemd", argv=[*ctl, "daemon-reload"]),
            Step("start the agent at boot/login", argv=[*ctl, "enable", UNIT_NAME]),
        ]
        journal = "journalctl -u" if system else "journalctl --user -u"
        plan.notes.append(f"Start it now with 'receco-agent start-service'; logs: {journal} {UNIT_NAME}")
        if not system:
            plan.notes.append(
                f"To keep it running while you are logged out: loginctl enable-linger {getpass.getuser()}"
            )
    elif action == "start":
        plan.steps.append(Step("start the agent", argv=[*ctl, "start", UNIT_NAME]))
    elif action == "stop":
        plan.steps.append(Step("stop the agent", argv=[*ctl, "stop", UNIT_NAME]))
    else:
        plan.steps += [
            Step(
                "stop the agent and disable it",
                argv=[*ctl, "disable", "--now", UNIT_NAME],
                check=False,
            ),
            Step(f"remove {unit}", remove=unit),
            Step("reload systemd", argv=[*ctl, "daemon-reload"]),
        ]
    return plan


def _macos(action: str, settings: Settings, system: bool, command: list[str]) -> Plan:
    if system:
        plist = Path("/Library/LaunchDaemons") / f"{LAUNCHD_LABEL}.plist"
        domain = "system"
    else:
        plist = Path.home() / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
        domain = f"gui/{os.getuid() if hasattr(os, 'getuid') else 501}"
    plan = Plan()
    if action == "install":
        plan.steps += [
            Step(
                f"write the launchd job {plist}",
                write=(plist, launchd_plist(settings, command, system)),
            ),
            Step(
                "allow the job to run",
                argv=["launchctl", "enable", f"{domain}/{LAUNCHD_LABEL}"],
            ),
        ]
        plan.notes.append(f"Start it now with 'receco-agent start-service'; logs: {settings.home / 'agent.log'}")
    elif action == "start":
        plan.steps.append(
            Step(
                "load and start the job",
                argv=["launchctl", "bootstrap", domain, str(plist)],
            )
        )
    elif action == "stop":
        plan.steps.append(
            Step(
                "stop and unload the job",
                argv=["launchctl", "bootout", f"{domain}/{LAUNCHD_LABEL}"],
            )
        )
    else:
        plan.steps += [
            Step(
                "stop and unload the job",
                argv=["launchctl", "bootout", f"{domain}/{LAUNCHD_LABEL}"],
                check=False,
            ),
            Step(f"remove {plist}", remove=plist),
        ]
    return plan


def _windows(action: str, settings: Settings, dry_run: bool) -> Plan:
    if dry_run:
        calls = dict.fromkeys(("install", "home", "start", "stop", "remove", "stop_quietly"), lambda: None)
    else:
        try:
            from receco_agent import winservice
        except ImportError as exc:
            raise ServiceError(
                f"pywin32 is missing ({exc}); reinstall with 'pip install ./posagent' on Windows"
            ) from None
        calls = winservice.actions(settings.home)
    plan = Plan()
    python = sys.executable
    if action == "install":
        plan.steps += [
            Step(
                f"register the Windows service {WINDOWS_SERVICE} (Receco POS agent), started automatically, "
                f"running receco_agent.winservice.RececoAgentService with {python}",
                call=calls["install"],
            ),
            Step(
                f"store the agent home {settings.home} in the service's parameters",
                call=calls["home"],
            ),
        ]
        plan.notes.append(f"Start it now with 'receco-agent start-service'; logs: {settings.home / 'agent.log'}")
        plan.notes.append("Run this from an Administrator prompt.")
    elif action == "start":
        plan.steps.append(Step(f"start the Windows service {WINDOWS_SERVICE}", call=calls["start"]))
    elif action == "stop":
        plan.steps.append(Step(f"stop the Windows service {WINDOWS_SERVICE}", call=calls["stop"]))
    else:
        plan.steps += [
            Step(
                f"stop the Windows service {WINDOWS_SERVICE} if it runs",
                call=calls["stop_quietly"],
            ),
            Step(f"remove the Windows service {WINDOWS_SERVICE}", call=calls["remove"]),
        ]
    return plan


def make_plan(
    action: str,
    settings: Settings,
    platform: str | None = None,
    system: bool = False,
    dry_run: bool = False,
    python: str | None = None,
    env: dict | None = None,
) -> Plan:
    """Return the plan for ``action`` ('install', 'start', 'stop', 'uninstall') on ``platform``."""
    if action not in ACTIONS:
        raise ValueError(action)
    platform = platform or current_platform()
    command = agent_command(python)
    if platform == "linux":
        return _linux(action, settings, system, command, dict(os.environ if env is None else env))
    if platform == "macos":
        return _macos(action, settings, system, command)
    if platform == "windows":
        return _windows(action, settings, dry_run)
    raise ServiceError(f"unknown platform {platform!r}; use one of {', '.join(PLATFORMS)}")


def carry_out(plan: Plan, dry_run: bool, out: TextIO) -> None:
    """Print (dry run) or do the steps of ``plan``; raise ServiceError on the first failure."""
    for step in plan.steps:
        if dry_run:
            out.write(f"would {step.description}\n")
            if step.write is not None:
                path, text = step.write
                out.write(f"--- {path}\n{text}")
                if not text.endswith("\n"):
                    out.write("\n")
                out.write("---\n")
            if step.argv is not None:
                out.write(f"$ {shlex.join(step.argv)}\n")
        else:
            out.write(f"{step.description[0].upper()}{step.description[1:]}\n")
            _run_step(step)
    out.writelines(f"{note}\n" for note in plan.notes)
