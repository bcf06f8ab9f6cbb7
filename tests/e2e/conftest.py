from __future__ import annotations

import httpx
import pytest

from tests.helpers import Server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = Server(tmp_path_factory.mktemp("server") / "home").start()
    yield running
    running.stop()


@pytest.fixture
def client(server):
    with httpx.Client(base_url=f"{server.url}/agentmemory", timeout=10) as http:
        yield http


@pytest.fixture
def start_server(tmp_path):
    """Start servers with their own settings; all are stopped after the test."""
    started: list[Server] = []

    def start(env: dict[str, str] | None = None, name: str = "home") -> Server:
        running = Server(tmp_path / name, env).start()
        started.append(running)
        return running

    yield start
    for running in started:
        running.kill()
