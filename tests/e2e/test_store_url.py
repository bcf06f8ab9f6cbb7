"""A server started with MEMVAULT_STORE_URL keeps its store there, and /health says so."""

from __future__ import annotations

import httpx


def test_a_server_keeps_its_store_where_the_url_says_and_health_says_where(start_server, tmp_path):
    there = tmp_path / "shared" / "memory.db"
    server = start_server({"MEMVAULT_STORE_URL": f"sqlite:///{there}"})
    store = httpx.get(f"{server.url}/agentmemory/health", timeout=10).json()["store"]
    assert (store["engine"], store["location"]) == ("sqlite", str(there))
    assert there.exists()
