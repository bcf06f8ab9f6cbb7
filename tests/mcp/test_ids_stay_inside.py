"""Ids that become paths stay inside their folders, through the tools an agent calls and
the archive import that can plant such an id on the board."""

from __future__ import annotations

from urllib.parse import quote

import anyio
import httpx

from memvault.vault.board import Board
from memvault.vault.table import format_row
from tests.helpers import wait_for
from tests.mcp.clients import http, text

ESCAPING = "2026-01-01-0000-x/../../../../../x/note"
SECRET = "the contents of a note outside the vault\n"


def _row(session_id: str) -> list[str]:
    return [
        session_id,
        "x",
        "planted",
        "a row whose id climbs out of memory/sessions/",
        "-",
        "active",
        "-",
        "2026-01-01 00:00",
        "2026-01-01 00:00",
    ]


def _board_with(session_id: str) -> str:
    board = Board.parse(None)
    return board.render() + format_row(_row(session_id)) + "\n"


def _plant_outside(server) -> None:
    # memory/sessions/ + the id's parts lands beside the server's home (the folder the
    # id's first part names must exist for the system to walk back out of it).
    (server.home / "vault" / "memory" / "sessions" / "2026-01-01-0000-x").mkdir(
        parents=True, exist_ok=True
    )
    outside = server.home.parent / "x" / "note.md"
    outside.parent.mkdir(parents=True, exist_ok=True)
    outside.write_text(SECRET, encoding="utf-8")


def test_an_imported_board_row_whose_id_leaves_the_sessions_folder_is_refused(server):
    _plant_outside(server)
    records = [
        {"format": "memvault-export", "version": 1, "includes": {"events": False}},
        {"kind": "board", "path": "memory/index.md", "text": _board_with(ESCAPING)},
        {"kind": "end", "records": {"board": 1}},
    ]
    answer = httpx.post(
        f"{server.url}/agentmemory/import", json={"exportData": records}, timeout=30
    )
    assert answer.status_code == 200, answer.text
    report = answer.json()["report"]
    assert report["counts"]["board"]["refused"] == 1, report
    assert any(ESCAPING in problem["error"] for problem in report["problems"]), report
    board = server.home / "vault" / "memory" / "index.md"
    assert not board.exists() or ESCAPING not in board.read_text(encoding="utf-8")


def test_memory_get_never_reads_a_snapshot_outside_the_sessions_folder(server):
    _plant_outside(server)
    # A person (or another tool) wrote the row straight into the board.
    board = server.home / "vault" / "memory" / "index.md"
    board.parent.mkdir(parents=True, exist_ok=True)
    board.write_text(_board_with(ESCAPING), encoding="utf-8")

    async def main() -> None:
        async with http(server.url) as client:
            result = await client.call_tool("memory_get", {"id": ESCAPING})
            assert SECRET.strip() not in text(result)
            assert result.is_error and ESCAPING in text(result)

    try:
        anyio.run(main)
    finally:
        board.unlink()


def test_rest_reads_and_forgets_refuse_an_id_that_leaves_its_folder_naming_it(server):
    _plant_outside(server)
    board = server.home / "vault" / "memory" / "index.md"
    board.parent.mkdir(parents=True, exist_ok=True)
    board.write_text(_board_with(ESCAPING), encoding="utf-8")
    base = f"{server.url}/agentmemory"

    def indexed() -> bool:
        """the planted row is in the search index"""
        found = httpx.post(
            f"{base}/search", json={"query": "planted", "kinds": ["summary"]}, timeout=30
        ).json()["results"]
        return any(hit["id"] == ESCAPING for hit in found)

    try:
        wait_for(indexed)
        # Quoted whole, so the client does not fold the dot segments away itself.
        got = httpx.get(f"{base}/memories/{quote(ESCAPING, safe='')}", timeout=30)
        forgot = httpx.post(f"{base}/forget", json={"memoryId": "../../x/note"}, timeout=30)
    finally:
        board.unlink()
    assert got.status_code == 404 and ESCAPING in got.json()["error"], got.text
    assert SECRET.strip() not in got.text
    assert forgot.status_code == 400 and "../../x/note" in forgot.json()["error"], forgot.text
    assert (server.home.parent / "x" / "note.md").exists()


def test_memory_get_refuses_a_fragment_id_that_climbs_out_of_the_fragments_folder(server):
    async def main() -> None:
        async with http(server.url) as client:
            result = await client.call_tool("memory_get", {"id": "../../x/note"})
            assert result.is_error and "../../x/note" in text(result), text(result)

    anyio.run(main)


def test_memory_get_does_not_follow_a_snapshot_that_links_out_of_the_vault(server):
    _plant_outside(server)
    session_id = "2026-01-02-0000-linked"
    sessions = server.home / "vault" / "memory" / "sessions"
    link = sessions / f"{session_id}.md"
    link.symlink_to(server.home.parent / "x" / "note.md")
    board = server.home / "vault" / "memory" / "index.md"
    board.write_text(_board_with(session_id), encoding="utf-8")

    async def main() -> None:
        async with http(server.url) as client:
            result = await client.call_tool("memory_get", {"id": session_id})
            assert SECRET.strip() not in text(result)
            assert result.is_error and session_id in text(result), text(result)

    try:
        anyio.run(main)
    finally:
        board.unlink()
        link.unlink()


def test_a_fragment_id_that_names_no_file_is_a_400_naming_it_never_a_500(server):
    """``.`` names the fragments folder itself and 300 characters make a file name no
    filesystem takes: both are refused by name, on every route that takes a fragment id."""
    base = f"{server.url}/agentmemory"
    # "." goes as %2E, as a client sends it, so it is not folded away as a dot segment.
    for memory_id, quoted in ((".", "%2E"), ("x" * 300, "x" * 300)):
        answers = [
            httpx.delete(f"{base}/fragments/{quoted}", timeout=30),
            httpx.patch(f"{base}/fragments/{quoted}", json={"summary": "s"}, timeout=30),
        ]
        for answer in answers:
            assert answer.status_code == 400, (memory_id[:10], answer.status_code, answer.text)
            assert memory_id[:40] in answer.json()["error"], answer.text
