"""The user's own vault: `memvault vault PATH` points a home at an existing Obsidian vault;
the server, the relay and every command of that home use it, memvault writes only its own
folders there, and the viewer's `obsidian://` links name it as Obsidian does."""

from __future__ import annotations

import subprocess
import sys
from urllib.parse import quote

import httpx

from tests.helpers import Server
from tests.mcp.clients import relay_env
from tests.relay.lines import LineRelay, initialize


def memvault(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "memvault.cli", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def test_vault_points_a_home_at_an_existing_obsidian_vault(tmp_path):
    home = tmp_path / "home"
    mine = tmp_path / "My Notes 筆記"
    (mine / ".obsidian").mkdir(parents=True)
    (mine / "ideas.md").write_text("# my own note\n", encoding="utf-8")
    env = relay_env(home)

    shown = memvault("vault", env=env)
    assert shown.returncode == 0 and f"vault {home / 'vault'} (from the default" in shown.stdout
    chosen = memvault("vault", str(mine), env=env)
    assert chosen.returncode == 0, chosen.stderr
    assert f"is kept in {mine}" in chosen.stdout and "Open it in Obsidian" in chosen.stdout
    assert (home / "vault.path").read_text(encoding="utf-8") == f"{mine}\n"

    server = Server(home).start()
    try:
        saved = httpx.post(
            f"{server.url}/agentmemory/remember",
            json={"project": "own", "summary": "Kept in my vault", "facts": ["where: mine"]},
            timeout=30,
        )
        assert saved.status_code == 201, saved.text
        said = httpx.get(f"{server.url}/agentmemory/server", timeout=30).json()
        assert said["vault"] == str(mine.resolve()) and said["vaultName"] == mine.name
        page = httpx.get(f"{server.url}/fragments", timeout=30).text
        assert f"obsidian://open?vault={quote(mine.name, safe='')}&amp;file=" in page
        # A relay of the same home, naming no vault, finds the same one and is let through.
        with LineRelay(home, MEMVAULT_URL=server.url) as relay:
            assert relay.ask(initialize(1))["result"]["serverInfo"]["name"] == "memvault"
        status = memvault("status", env={**env, "MEMVAULT_URL": server.url})
        assert status.returncode == 0, status.stderr
        assert f"vault folder {mine.resolve()}: open it in Obsidian" in " ".join(
            status.stdout.split()
        )
        assert "open this folder in Obsidian" in server.log()  # the start banner says it
    finally:
        server.stop()
    assert sorted(p.name for p in mine.iterdir()) == [
        ".obsidian",
        "agent-memory",
        "ideas.md",
        "memory",
    ]
    assert (mine / "ideas.md").read_text(encoding="utf-8") == "# my own note\n"

    back = memvault("vault", "--default", env=env)
    assert back.returncode == 0 and not (home / "vault.path").exists()


def test_vault_refuses_a_path_that_is_not_a_folder(tmp_path):
    env = relay_env(tmp_path / "home")
    refused = memvault("vault", str(tmp_path / "nowhere"), env=env)
    assert refused.returncode == 2
    assert "is not a folder" in refused.stderr
    assert not (tmp_path / "home" / "vault.path").exists()
