"""What health says of a server's role: on SQLite the one server owns the vault, with no
connection pool and nothing queued for an owner; `memvault status` says it in words."""

from __future__ import annotations

import httpx

from tests.e2e.test_health_visibility import memvault


def test_a_sqlite_server_owns_the_vault_and_health_and_status_say_so(start_server):
    server = start_server({"MEMVAULT_EMBEDDINGS": "none", "MEMVAULT_LLM": "none"})
    report = httpx.get(f"{server.url}/agentmemory/health", timeout=10).json()
    assert report["store"]["engine"] == "sqlite" and report["store"]["pool"] is None
    replication = report["replication"]
    assert replication["vaultOwner"] is True and replication["role"] == "vault owner"
    assert replication["since"] and replication["vaultWritesQueued"] == 0

    table = memvault("status", url=server.url)
    assert table.returncode == 0, table.stderr
    text = " ".join(table.stdout.replace("│", " ").split())
    assert f"vault role writes the vault since {replication['since']}" in text, text
    assert "vault writes queued 0" in text and "connections" not in text


def test_the_viewers_health_page_names_the_role(start_server):
    server = start_server({"MEMVAULT_EMBEDDINGS": "none", "MEMVAULT_LLM": "none"})
    page = httpx.get(f"{server.url}/health", timeout=10)
    assert page.status_code == 200, page.text
    assert '<td id="vault-role">writes the vault · since ' in page.text
    assert "<th>Vault writes queued</th><td>0</td>" in page.text
    assert "<th>Connections</th>" not in page.text  # SQLite has no pool
