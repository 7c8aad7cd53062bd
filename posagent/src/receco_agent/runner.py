"""Running the agent: logging set up once, the HTTP server and the forwarder started and
stopped together; used by the ``start`` command and the Windows service."""

import logging
import logging.handlers
import sys
import threading
from pathlib import Path

from receco_agent import __version__
from receco_agent.agent import Agent
from receco_agent.config import Settings
from receco_agent.server import AgentServer

log = logging.getLogger("receco_agent")

SHUTDOWN_TIMEOUT = 30.0


def configure_logging(level: str, log_file: Path | None = None) -> None:
    """Send the agent's log records to stderr (or ``log_file``) at ``level``."""
    if log_file is not None:
        handler: logging.Handler = logging.handlers.RotatingFileHandler(
            log_file, maxBytes=5 * 1024 * 1024, backupCount=3, encoding="utf-8"
        )
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def run_agent(settings: Settings, stop: threading.Event, host: str = "127.0.0.1") -> None:
    """Serve the agent until ``stop`` is set, then finish work in flight and return.

    Raises OSError when the port cannot be bound.
    """
    agent = Agent(settings)
    server = AgentServer(agent, host=host)
    serving = threading.Thread(target=server.serve_forever, name="receco-http", kwargs={"poll_interval": 0.2})
    agent.forwarder.start()
    serving.start()
    log.info(
        "Receco agent %s listening on http://%s:%s (queue %s, service %s)",
        __version__,
        host,
        settings.port,
        settings.queue_path,
        settings.api_url,
    )
    try:
        while not stop.wait(0.5):
            pass
    finally:
        log.info("Stopping: finishing uploads in flight")
        agent.forwarder.request_stop()  # both finish their current upload at once
        if not server.stop(SHUTDOWN_TIMEOUT):
            log.warning("A sale was still being uploaded after %s s; it stays queued", SHUTDOWN_TIMEOUT)
        server.server_close()
        serving.join(SHUTDOWN_TIMEOUT)
        agent.forwarder.stop(SHUTDOWN_TIMEOUT)
        agent.outbox.close()
        log.info("Stopped")
