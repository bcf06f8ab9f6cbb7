from __future__ import annotations

import pytest

from tests.helpers import Server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = Server(tmp_path_factory.mktemp("hooks") / "home").start()
    yield running
    running.stop()


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "demo-app"
    folder.mkdir()
    return folder
