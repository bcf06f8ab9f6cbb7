"""A store from before bookkeeping lost its words: once upgraded, a notice's words find
neither the notice nor the tool calls beside it, which had held them as context (the index
reads them again in the background)."""

from __future__ import annotations

from memvault import Memory
from memvault.search import documents
from memvault.store import migrations
from tests.helpers import envelope


def event(n: int, hook: str, data: dict) -> dict:
    return envelope(
        "s",
        n,
        hookType=hook,
        eventId=f"s:{n}",
        project="demo-app",
        cwd="/src/demo-app",
        timestamp=f"2026-12-05T10:00:{n:02d}.000Z",
        data=data,
    )


SESSION = [
    event(0, "post_tool_use", {"tool_name": "Bash", "tool_input": {"command": "ls dir"}}),
    event(1, "notification", {"message": "Claude needs your permission to use Bash"}),
    event(2, "prompt_submit", {"prompt": "rotate the refresh token"}),
]


def titles(memory: Memory, query: str) -> list[str]:
    return [hit.document.title for hit in memory.index.searcher.search(query)]


def test_a_store_from_before_forgets_its_bookkeepings_words(tmp_path, monkeypatch):
    home = tmp_path / "home"
    load = migrations.load
    with monkeypatch.context() as before:  # bookkeeping indexed with its words
        before.setattr(migrations, "load", lambda e: [m for m in load(e) if m.version < 19])
        before.setattr(documents, "bookkeeping_observation", lambda kind, hook: False)
        with Memory.open(home=home, embeddings="none") as old:
            old.capture.observe_many(SESSION)
            old.index.index_now()
            assert len(titles(old, "needs your permission")) == 3  # itself and both neighbours
    with Memory.open(home=home, embeddings="none") as memory:
        memory.index.index_now()
        assert titles(memory, "needs your permission") == []
        assert titles(memory, "rotate the refresh token")
