"""The agent's HTTP interface for the POS: POST /transactions and GET /health."""

import logging
import time

from receco_agent import timing
from receco_agent.agent import Agent
from receco_agent.httputil import Handler, Server, Stopping
from receco_agent.transactions import MAX_BODY_BYTES, MAX_KEY_LENGTH

log = logging.getLogger(__name__)


class AgentHandler(Handler):
    """Routes requests to the Agent held by the server."""

    server: "AgentServer"

    def do_GET(self) -> None:
        if not self.host_allowed():
            return
        if self.path.split("?")[0] == "/health":
            self.send_json(200, self.server.agent.health())
        else:
            self.send_error_json(404, f"No such endpoint: GET {self.path.split('?')[0]}")

    def do_POST(self) -> None:
        if not self.host_allowed():
            return
        path = self.path.split("?")[0]
        if path not in ("/transactions", "/refunds"):
            self.close_connection = True
            self.send_error_json(404, f"No such endpoint: POST {self.path.split('?')[0]}")
            return
        timing.begin(self.server.accepted_at(self.request))
        try:
            with self.server.working():
                key = self.headers.get("Idempotency-Key")
                if key is not None and not 1 <= len(key.strip()) <= MAX_KEY_LENGTH:
                    self.close_connection = True
                    self.send_error_json(400, f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} characters")
                    return
                body = self.read_json_body(MAX_BODY_BYTES)
                timing.mark("body")
                if body is not None:
                    handle = self.server.agent.accept if path == "/transactions" else self.server.agent.refund
                    status, answer = handle(body, key.strip() if key else None)
                    self.send_json(status, answer)
        except Stopping:
            self.close_connection = True
            self.send_error_json(503, "The agent is stopping; send the sale again in a moment")
        except Exception as exc:
            # A POS must never be left without an answer: it would not know whether to retry.
            log.exception("Could not handle POST %s", path)
            self.close_connection = True
            self.send_error_json(500, f"The agent failed on this request ({type(exc).__name__}); see its log")
        finally:
            timing.end()


class AgentServer(Server):
    """The HTTP server of one Agent."""

    def __init__(self, agent: Agent, host: str = "127.0.0.1", port: int | None = None):
        self.agent = agent
        self._accepted: dict = {}  # socket -> when accepted, while RECECO_AGENT_TIMINGS is set
        super().__init__((host, agent.settings.port if port is None else port), AgentHandler)

    def get_request(self):
        request, address = super().get_request()
        if timing.enabled():
            self._accepted[request] = time.monotonic()
        return request, address

    def accepted_at(self, request) -> float | None:
        """When the connection of ``request`` was accepted (once, for its first request), if timed."""
        return self._accepted.pop(request, None)

    def shutdown_request(self, request) -> None:
        self._accepted.pop(request, None)
        super().shutdown_request(request)
