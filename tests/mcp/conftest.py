from __future__ import annotations

import pytest


@pytest.fixture
def vault(server):
    return server.home / "vault"
