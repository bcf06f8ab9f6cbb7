from __future__ import annotations

import httpx
import pytest


@pytest.fixture
def client(server):
    with httpx.Client(base_url=f"{server.url}/agentmemory", timeout=10) as http:
        yield http
