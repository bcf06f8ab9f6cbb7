"""An observation that says nothing of its own (a turn's end with no text) is found by its
own words only: a search for what was said around it answers with what was said, never
with a result that reads "Turn ended"."""

from __future__ import annotations

from memvault import Memory
from memvault.search import documents
from memvault.store import migrations


def event(n: int, hook: str, data: dict) -> dict:
    return {
        "hookType": hook,
        "sessionId": "flaky",
        "eventId": f"flaky:{n}",
        "project": "chat",
        "cwd": "/src/chat",
        "timestamp": f"2026-12-05T10:00:{n:02d}.000Z",
        "data": data,
    }


TURN = [
    event(0, "prompt_submit", {"prompt": "why does the websocket keep dropping"}),
    event(1, "assistant_response", {"assistantResponse": "The proxy idles out after 60 s."}),
    event(2, "stop", {"status": "completed"}),
]


def found(memory: Memory, query: str) -> list[str]:
    return [hit.document.title for hit in memory.search(query, kinds=["observation"])]


def test_a_turns_end_is_not_found_by_the_words_around_it(tmp_path):
    with Memory.open(home=tmp_path / "home") as memory:
        memory.capture.observe_many(TURN)
        memory.index.index_now()
        titles = found(memory, "proxy idles out")
        assert titles and titles[0].startswith("Response")
        assert "Turn ended" not in titles
        assert "Turn ended" in found(memory, "turn ended")  # its own words still find it


def test_a_store_from_before_makes_its_turn_ends_again(tmp_path, monkeypatch):
    home = tmp_path / "home"
    load = migrations.load
    with monkeypatch.context() as before:  # turn ends indexed with their neighbours' words
        before.setattr(migrations, "load", lambda e: [m for m in load(e) if m.version < 17])
        before.setattr(documents, "says_nothing", lambda observation: False)
        with Memory.open(home=home) as old:
            old.capture.observe_many(TURN)
            old.index.index_now()
            assert "Turn ended" in found(old, "proxy idles out")
    with Memory.open(home=home) as memory:
        memory.index.index_now()
        assert "Turn ended" not in found(memory, "proxy idles out")
        assert found(memory, "proxy idles out")[0].startswith("Response")
