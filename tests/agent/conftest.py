"""Fixtures for the agent's tests."""

from collections.abc import Iterator

import pytest
from receco_agent.config import Settings

from tests.agent.support import (
    FakeService,
    QuietServer,
    RunningAgent,
    make_settings,
    run_agent_server,
    service_handler,
    stop_agent_server,
)
from tests.background import serve_in_background
from tests.servers import closed_port


@pytest.fixture
def fake_service() -> Iterator[FakeService]:
    service = FakeService()
    server = QuietServer(("127.0.0.1", 0), service_handler(service))
    service.url = f"http://127.0.0.1:{server.server_address[1]}"
    stop = serve_in_background(server)
    yield service
    stop()


@pytest.fixture
def closed_url() -> Iterator[str]:
    """An http URL on which nothing listens (and nothing else may, while the test runs)."""
    with closed_port() as port:
        yield f"http://127.0.0.1:{port}/api"


@pytest.fixture
def agent_settings(tmp_path, fake_service) -> Settings:
    return make_settings(tmp_path / "home", fake_service.api_url)


@pytest.fixture
def agent_server(agent_settings) -> Iterator[RunningAgent]:
    """The agent served on a free port, without the background forwarder."""
    running = run_agent_server(agent_settings, forwarder=False)
    yield running
    stop_agent_server(running)
