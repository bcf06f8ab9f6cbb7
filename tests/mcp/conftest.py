from __future__ import annotations

import pytest

from tests.helpers import Server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A real `memvault serve`, shared by a module's tests."""
    running = Server(tmp_path_factory.mktemp("mcp") / "home").start()
    yield running
    running.stop()


@pytest.fixture
def vault(server):
    return server.home / "vault"
