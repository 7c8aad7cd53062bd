"""The Windows service (pywin32): runs the agent inside the service process.

Imported only on Windows. The agent home is kept in the service's registry parameters,
since a service does not see the installing user's environment."""

import logging
import threading
from pathlib import Path

import pywintypes
import servicemanager
import win32service
import win32serviceutil

from receco_agent import config
from receco_agent.config import WINDOWS_SERVICE
from receco_agent.runner import configure_logging, run_agent


class RececoAgentService(win32serviceutil.ServiceFramework):
    """The Receco POS agent as a Windows service."""

    _svc_name_ = WINDOWS_SERVICE
    _svc_display_name_ = "Receco POS agent"
    _svc_description_ = "Turns point-of-sale transactions into Receco digital receipts, with an offline queue."

    def __init__(self, args):
        super().__init__(args)
        self._stop = threading.Event()

    def SvcStop(self) -> None:
        # Only sets a flag: the agent finishes the upload in flight and returns from SvcDoRun.
        self.ReportServiceStatus(win32service.SERVICE_STOP_PENDING)
        self._stop.set()

    def SvcDoRun(self) -> None:
        servicemanager.LogMsg(
            servicemanager.EVENTLOG_INFORMATION_TYPE,
            servicemanager.PYS_SERVICE_STARTED,
            (self._svc_name_, ""),
        )
        home = win32serviceutil.GetServiceCustomOption(self._svc_name_, "home")
        try:
            settings = config.load(home)
            configure_logging(settings.log_level, log_file=settings.home / "agent.log")
            run_agent(settings, self._stop)
        except Exception as exc:
            logging.getLogger(__name__).exception("The agent service failed")
            servicemanager.LogErrorMsg(f"Receco agent failed: {exc}")


def actions(home: Path) -> dict:
    """Return the callables service_install uses to manage the service."""

    def install() -> None:
        win32serviceutil.InstallService(
            win32serviceutil.GetServiceClassString(RececoAgentService),
            WINDOWS_SERVICE,
            RececoAgentService._svc_display_name_,
            startType=win32service.SERVICE_AUTO_START,
            description=RececoAgentService._svc_description_,
        )

    def stop_quietly() -> None:
        # Uninstalling a service that is already stopped is normal, not an error.
        try:
            win32serviceutil.StopService(WINDOWS_SERVICE)
        except pywintypes.error as exc:
            logging.getLogger(__name__).info("Service not stopped: %s", exc)

    return {
        "install": install,
        "home": lambda: win32serviceutil.SetServiceCustomOption(WINDOWS_SERVICE, "home", str(home)),
        "start": lambda: win32serviceutil.StartService(WINDOWS_SERVICE),
        "stop": lambda: win32serviceutil.StopService(WINDOWS_SERVICE),
        "stop_quietly": stop_quietly,
        "remove": lambda: win32serviceutil.RemoveService(WINDOWS_SERVICE),
    }
