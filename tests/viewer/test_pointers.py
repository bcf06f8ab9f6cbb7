"""What the viewer points to: empty pages say how to fill them, links to rows organize
took off the board say where they went, the sessions page says how it is ordered, and
search leaves out the sessions' bookkeeping. Plain HTTP against a real server."""

from __future__ import annotations

import httpx

from tests.helpers import envelope, wait_for


def text(server, path: str, status: int = 200) -> str:
    answer = httpx.get(f"{server.url}{path}", timeout=10)
    assert answer.status_code == status, (path, answer.status_code)
    return " ".join(answer.text.split())


def test_empty_pages_say_how_to_fill_them(start_server):
    server = start_server()
    assert "<code>memvault session register --manual</code>" in text(server, "/")
    assert "<code>memvault install claude-code</code>" in text(server, "/sessions")
    assert "<code>memory_save</code>" in text(server, "/fragments")
    searched = text(server, "/search?q=zebra")
    assert "nothing matches" in searched and "Memory fills as connected editors work" in searched


def test_the_sessions_page_says_it_is_ordered_by_arrival(server):
    page = text(server, "/sessions")
    assert "most recently active" not in page
    assert "the latest to receive an event first" in page


def test_a_row_organize_removed_is_no_dead_end(server):
    started = httpx.post(
        f"{server.url}/agentmemory/session/start",
        json={"sessionId": "host-gone", "project": "demo-app", "cwd": "/p", "agentId": "cursor"},
        timeout=10,
    ).json()
    row = started["memorySessionId"]
    assert httpx.post(f"{server.url}/agentmemory/board/organize", json={}, timeout=10).is_success
    sessions = text(server, "/sessions")
    assert f'href="/board/{row}"' not in sessions
    assert f"{row} (off the board)" in sessions
    missing = text(server, f"/board/{row}", status=404)
    assert f"{row} is not on the board: organize removes idle rows" in missing
    assert 'href="/sessions/host-gone"' in missing and 'href="/board"' in missing


def test_search_leaves_out_bookkeeping(server):
    for n, hook in enumerate(("session_start", "notification", "session_end")):
        body = envelope("host-books", n, hookType=hook, data={"source": "startup zebra"})
        body["data"] |= {"message": "zebra waiting", "reason": "zebra exit"}
        assert httpx.post(f"{server.url}/agentmemory/observe", json=body, timeout=10).is_success
    # A file Cursor reads is told only before it happens: work, and shown.
    read = envelope(
        "host-books",
        8,
        hookType="pre_tool_use",
        data={"tool_name": "Read", "tool_input": {"file_path": "src/zebra_reader.py"}},
    )
    assert httpx.post(f"{server.url}/agentmemory/observe", json=read, timeout=10).is_success
    worked = envelope("host-books", 9, data={"tool_name": "Bash", "tool_input": "zebra build"})
    assert httpx.post(f"{server.url}/agentmemory/observe", json=worked, timeout=10).is_success

    def indexed():
        found = httpx.post(
            f"{server.url}/agentmemory/search", json={"query": "zebra"}, timeout=10
        ).json()
        built = any("zebra build" in (r.get("title") or "") for r in found["results"])
        return found if built else None

    # The work is the session's last event: once it is found, the events before it are
    # indexed too, and the REST search, like the viewer's, leaves them out.
    found = wait_for(indexed, timeout=30)
    titles = [r.get("title") or "" for r in found["results"]]
    page = text(server, "/search?q=zebra")
    assert "zebra build" in page and "zebra_reader.py" in page
    for bookkeeping in ("Session started", "Notification:", "Session ended"):
        assert bookkeeping not in page, bookkeeping
        assert not [t for t in titles if bookkeeping in t], bookkeeping
