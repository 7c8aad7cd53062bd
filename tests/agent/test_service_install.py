import io
import os
import plistlib
import re
import sys
from pathlib import Path

import pytest
from receco_agent import service_install
from receco_agent.config import Settings
from receco_agent.service_install import carry_out, launchd_plist, make_plan, systemd_unit

from tests.agent.support import run_cli

PYTHON = "/opt/receco/venv/bin/python"


@pytest.fixture
def home_settings(tmp_path):
    return Settings(home=tmp_path / "agent home")


def dry_run(plan) -> str:
    out = io.StringIO()
    carry_out(plan, dry_run=True, out=out)
    return out.getvalue()


def test_systemd_user_unit(home_settings):
    unit = systemd_unit(home_settings, [PYTHON, "-m", "receco_agent", "start"], system=False)
    assert unit == (
        "[Unit]\n"
        "Description=Receco POS agent (digital receipts, offline queue)\n"
        "After=network-online.target\n"
        "Wants=network-online.target\n"
        "\n"
        "[Service]\n"
        "Type=simple\n"
        f'Environment="RECECO_AGENT_HOME={home_settings.home}"\n'
        "Environment=PYTHONUNBUFFERED=1\n"
        f"ExecStart={PYTHON} -m receco_agent start\n"
        "Restart=on-failure\n"
        "RestartSec=5\n"
        "KillSignal=SIGTERM\n"
        "TimeoutStopSec=30\n"
        "\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )


def test_systemd_system_unit_runs_as_the_user(home_settings):
    unit = systemd_unit(home_settings, [PYTHON, "-m", "receco_agent", "start"], system=True, user="till")
    assert "User=till\n" in unit
    assert "WantedBy=multi-user.target\n" in unit


def test_linux_install_dry_run(home_settings, tmp_path):
    plan = make_plan("install", home_settings, platform="linux", python=PYTHON, env={"XDG_CONFIG_HOME": str(tmp_path)})
    unit_path = tmp_path / "systemd" / "user" / "receco-agent.service"
    text = dry_run(plan)
    assert text.startswith(f"would write the systemd unit {unit_path}\n--- {unit_path}\n[Unit]\n")
    assert f"ExecStart={PYTHON} -m receco_agent start\n" in text
    assert (
        "---\nwould reload systemd\n$ systemctl --user daemon-reload\n"
        "would start the agent at boot/login\n$ systemctl --user enable receco-agent.service\n"
        "Start it now with 'receco-agent start-service'; logs: journalctl --user -u receco-agent.service\n"
    ) in text
    assert not unit_path.exists()


@pytest.mark.parametrize(
    ("action", "commands"),
    [
        ("start", ["$ systemctl start receco-agent.service"]),
        ("stop", ["$ systemctl stop receco-agent.service"]),
        (
            "uninstall",
            [
                "$ systemctl disable --now receco-agent.service",
                "would remove /etc/systemd/system/receco-agent.service",
                "$ systemctl daemon-reload",
            ],
        ),
    ],
)
def test_linux_system_actions_dry_run(home_settings, action, commands):
    text = dry_run(make_plan(action, home_settings, platform="linux", system=True, python=PYTHON, env={}))
    for command in commands:
        assert command in text.splitlines()


def test_launchd_plist(home_settings):
    job = plistlib.loads(launchd_plist(home_settings, [PYTHON, "-m", "receco_agent", "start"], system=False).encode())
    assert job == {
        "Label": "com.receco.agent",
        "ProgramArguments": [PYTHON, "-m", "receco_agent", "start"],
        "EnvironmentVariables": {"RECECO_AGENT_HOME": str(home_settings.home), "PYTHONUNBUFFERED": "1"},
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ExitTimeOut": 30,
        "StandardOutPath": str(home_settings.home / "agent.log"),
        "StandardErrorPath": str(home_settings.home / "agent.log"),
        "WorkingDirectory": str(home_settings.home),
    }


def test_macos_install_and_start_dry_run(home_settings, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    plist = tmp_path / "Library" / "LaunchAgents" / "com.receco.agent.plist"
    text = dry_run(make_plan("install", home_settings, platform="macos", python=PYTHON))
    assert text.startswith(f"would write the launchd job {plist}\n--- {plist}\n<?xml")
    assert "<string>com.receco.agent</string>" in text
    uid = os.getuid()
    assert f"$ launchctl enable gui/{uid}/com.receco.agent\n" in text
    start = dry_run(make_plan("start", home_settings, platform="macos", python=PYTHON))
    assert start == f"would load and start the job\n$ launchctl bootstrap gui/{uid} {plist}\n"
    stop = dry_run(make_plan("stop", home_settings, platform="macos", system=True, python=PYTHON))
    assert stop == "would stop and unload the job\n$ launchctl bootout system/com.receco.agent\n"
    assert not plist.exists()


def test_windows_dry_run_needs_no_pywin32(home_settings):
    text = dry_run(make_plan("install", home_settings, platform="windows", dry_run=True))
    assert text == (
        "would register the Windows service RececoAgent (Receco POS agent), started automatically, running "
        f"receco_agent.winservice.RececoAgentService with {sys.executable}\n"
        f"would store the agent home {home_settings.home} in the service's parameters\n"
        f"Start it now with 'receco-agent start-service'; logs: {home_settings.home / 'agent.log'}\n"
        "Run this from an Administrator prompt.\n"
    )
    assert dry_run(make_plan("uninstall", home_settings, platform="windows", dry_run=True)) == (
        "would stop the Windows service RececoAgent if it runs\nwould remove the Windows service RececoAgent\n"
    )


def test_real_run_writes_the_unit_and_runs_the_commands(home_settings, tmp_path):
    unit = tmp_path / "units" / "receco-agent.service"
    plan = service_install.Plan(
        steps=[
            service_install.Step("write", write=(unit, "[Unit]\n")),
            service_install.Step("run", argv=[sys.executable, "-c", "pass"]),
        ]
    )
    carry_out(plan, dry_run=False, out=io.StringIO())
    assert unit.read_text() == "[Unit]\n"
    failing = service_install.Plan(
        steps=[service_install.Step("fail", argv=[sys.executable, "-c", "raise SystemExit(3)"])]
    )
    with pytest.raises(service_install.ServiceError, match=r"failed \(exit 3\)"):
        carry_out(failing, dry_run=False, out=io.StringIO())


def test_cli_dry_run_for_systemd_and_launchd(tmp_path):
    home = tmp_path / "home"
    result = run_cli(home, "install-service", "--dry-run", "--platform", "linux", "--system")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(
        "would write the systemd unit /etc/systemd/system/receco-agent.service\n"
        "--- /etc/systemd/system/receco-agent.service\n[Unit]\n"
    )
    assert f"Environment=RECECO_AGENT_HOME={home}\n" in result.stdout
    bin_dir = re.escape(str(Path(sys.executable).parent))
    assert re.search(rf"\nExecStart={bin_dir}/python[0-9.]* -m receco_agent start\n", result.stdout)
    assert "$ systemctl enable receco-agent.service\n" in result.stdout

    result = run_cli(home, "install-service", "--dry-run", "--platform", "macos")
    assert result.returncode == 0, result.stderr
    assert "<key>ProgramArguments</key>" in result.stdout
    assert "$ launchctl enable gui/" in result.stdout


def test_cli_refuses_platform_without_dry_run(tmp_path):
    result = run_cli(tmp_path, "install-service", "--platform", "macos")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == "receco-agent: --platform is only for --dry-run\n"
