"""Sessions as retrieval units: a session's requests, decisions, files and commands in one
document, found by a request whose words no single event of it holds; and the whole text of
every event searchable, not its observation's clipped narrative."""

from __future__ import annotations

import dataclasses
import sqlite3

import pytest

from memvault import Memory, analyzer
from memvault.search import engine
from memvault.store import migrations
from memvault.store.sqlite.connections import _statements


@pytest.fixture
def memory(tmp_path):
    with Memory.open(home=tmp_path / "home") as opened:
        yield opened


def event(session: str, n: int, hook: str, data: dict, project: str = "blast") -> dict:
    return {
        "hookType": hook,
        "sessionId": session,
        "eventId": f"{session}:{n}",
        "project": project,
        "cwd": f"/src/{project}",
        "timestamp": f"2026-11-30T10:00:{n:02d}.000Z",
        "data": data,
    }


def work(memory: Memory) -> None:
    memory.capture.observe_many(
        [
            event("nested", 0, "prompt_submit", {"prompt": "reduce the usage of nested types"}),
            event(
                "nested",
                1,
                "post_tool_use",
                {
                    "tool_name": "Edit",
                    "tool_input": {"file_path": "/src/blast/Merge/CharacterLevelDiffer.cs"},
                    "tool_output": "ok",
                },
            ),
            event("nested", 2, "assistant_response", {"assistantResponse": "Done."}),
            event("other", 0, "prompt_submit", {"prompt": "add a README badge for the build"}),
            event(
                "other",
                1,
                "post_tool_use",
                {"tool_name": "Read", "tool_input": {"file_path": "README.md"}, "tool_output": ""},
            ),
        ]
    )
    memory.index.index_now()


def test_a_session_is_found_by_words_no_single_event_of_it_holds(memory):
    work(memory)
    query = "nested types in CharacterLevelDiffer"
    events = memory.search(query, kinds=["observation"])
    assert not any(
        {"nest", "characterleveldiff"} <= set(h.document.body.lower().split()) for h in events
    )
    (first, *_) = memory.search(query, kinds=["session"])
    assert first.document.key == "nested"
    assert "CharacterLevelDiffer.cs" in first.document.body  # the files it touched, listed
    assert first.document.event_ids[0] == "nested:0"


def test_a_file_named_by_its_parts_finds_the_session_that_touched_it(memory):
    work(memory)
    for query in (
        "CharacterLevelDiffer.cs",
        "character level differ",
        "Merge/CharacterLevelDiffer",
    ):
        assert memory.search(query, kinds=["session"])[0].document.key == "nested", query


def test_a_session_public_id_reads_it_back(memory):
    work(memory)
    entry = memory.recall.get("session:nested")
    assert entry is not None and entry.document.kind == "session"
    assert entry.id == "session:nested"
    assert "reduce the usage of nested types" in entry.body


def test_a_session_with_no_work_gets_no_document(memory):
    memory.capture.observe_many([event("idle", 0, "session_start", {"source": "startup"})])
    memory.index.index_now()
    assert memory.store.document("session", "idle") is None


def test_the_whole_text_of_a_long_reply_is_searchable(memory):
    reply = (
        "We looked at the pool settings. " * 40 + "The culprit was the kubernetes liveness probe."
    )
    memory.capture.observe_many(
        [event("long", 0, "assistant_response", {"assistantResponse": reply})]
    )
    memory.index.index_now()
    (hit,) = memory.search("kubernetes liveness", kinds=["observation"])
    assert hit.document.key == "obs_1"
    assert len(hit.document.summary) < 300  # what a result shows stays short


def test_an_events_line_tells_its_words_and_says_its_code_as_an_ellipsis(memory):
    """The line an agent is told of an event: a quoted message's words stay (the error in
    Cursor's "Fix in Chat", without its template), a diff is "…", and headings, bold and a
    table's rules are left out."""
    asked = (
        "For the code present, we get this error:\n```\nMethod has 8 parameters, which is"
        " greater than the 7 authorized.\n```\nHow can I resolve this? If you propose a fix,"
        " please make it concise."
    )
    fixed = (
        "I see the issue. The adapter still builds a **real** file system:\n```diff\n"
        + "- var fs = new FileSystem();\n+ var fs = new MockFileSystem();\n" * 20
        + "```\n```cs\nvar a = 1;\nvar b = 2;\n```\n"
        + "### Result\n| test | before | after |\n|---|---|---|\n| hashing | 4 s | 1 s |"
    )
    memory.capture.observe_many(
        [
            event("fix", 0, "prompt_submit", {"prompt": asked}),
            event("fix", 1, "assistant_response", {"assistantResponse": fixed}),
        ]
    )
    memory.index.index_now()
    prompt, reply = (memory.store.document("observation", f"obs_{n}") for n in (1, 2))
    # Cursor's "Fix in Chat" is told by its message, without the words it adds every time.
    assert prompt.summary == "Method has 8 parameters, which is greater than the 7 authorized."
    assert reply.summary == (
        "I see the issue. The adapter still builds a real file system: … Result test before"
        " after hashing 4 s 1 s"
    )


def test_tool_calls_get_no_vector_but_what_people_said_and_sessions_do(memory):
    work(memory)
    memory.capture.observe_many([event("nested", 3, "stop", {"status": "completed"})])
    memory.index.index_now()
    documents = memory.store.documents(
        [doc_id for doc_id, _, _ in memory.store.documents_to_embed(0, limit=100)]
    )
    embedded = {(d.kind, d.title.split(":")[0]) for d in documents.values()}
    assert ("observation", "Edit") not in embedded
    assert ("observation", "Read") not in embedded
    assert ("observation", "Prompt") in embedded
    assert ("observation", "Turn ended") not in embedded  # a turn's end that says nothing
    assert {d.key for d in documents.values() if d.kind == "session"} == {"nested", "other"}
    assert memory.store.documents_since(0) == len(documents)


def test_a_store_from_before_session_documents_keeps_its_documents_and_ids(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    path = home / "memvault.db"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "applied_at TEXT NOT NULL)"
        )
        for migration in migrations.load("sqlite"):
            if migration.version >= 14:
                break
            for statement in _statements(migration.sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations VALUES (?, ?, '2026-01-01')",
                (migration.version, migration.name),
            )
        conn.execute(
            "INSERT INTO documents (kind, key, title, summary, body, importance, updated_at, "
            "content_hash, revision, embed_text) VALUES "
            "('observation', 'obs_1', 't', 's', 'b', 0.5, '2026-01-01', 'h', 1, 'b'), "
            "('observation', 'obs_2', 't', 's', 'b', 0.5, '2026-01-01', 'h', 2, 'b')"
        )
        conn.execute("DELETE FROM documents WHERE key = 'obs_2'")
    with Memory.open(home=home) as memory:
        assert memory.store.document("observation", "obs_1") is not None
        work(memory)
        ids = [memory.store.document("session", key).id for key in ("nested", "other")]
        assert min(ids) > 2  # an id is never reused, a deleted one's neither


def test_a_session_document_is_made_once_its_events_are_indexed_not_for_every_batch(memory):
    memory.capture.observe_many(
        [
            event("steps", n, "prompt_submit", {"prompt": f"step {n} of the migration"})
            for n in range(5)
        ]
    )
    indexer = memory.index.indexer
    assert indexer.index_observations(batch=2) == 2  # a full batch: more to come
    assert memory.store.document("session", "steps") is None
    while indexer.index_observations(batch=2):
        pass
    document = memory.store.document("session", "steps")
    assert document is not None and "step 4 of the migration" in document.body


def test_a_sessions_replies_are_words_of_its_document(memory):
    """A session is found by what its agent answered, as a plain BM25 over whole sessions
    finds it: the word is in a reply, in no request, file or command of it."""
    memory.capture.observe_many(
        [
            event("bisect", 0, "prompt_submit", {"prompt": "why did the nightly build break"}),
            event(
                "bisect",
                1,
                "assistant_response",
                {"assistantResponse": "Bisected it: the regression came with the vendored zlib."},
            ),
        ]
    )
    memory.index.index_now()
    found = memory.search("vendored zlib regression", project="blast", kinds=["session"])
    assert [hit.document.key for hit in found] == ["bisect"]


def test_a_session_made_again_analyzes_only_its_new_texts(monkeypatch):
    """Its words are each text's own words joined, which is what the whole would analyze
    to; a text analyzed when the document was made last is not analyzed again."""
    from memvault.derive.digest import Digest
    from memvault.search import documents

    def digest(replies: list[str]) -> Digest:
        return Digest(
            requests=["fix the fetchUser 超时 bug"],
            decisions=["Use retries with a backoff."],
            files=[],
            commands=[],
            targets=[],
            replies=replies,
            event_ids=[],
            first_at="",
            last_at="",
        )

    first = digest(["I changed fetchUser.", "数据库连接超时了"])
    later = digest([*first.replies, "It retries three times now."])
    for made in (first, later):
        whole = "\n".join([*made.requests, *made.decisions, *made.replies])
        assert documents._said_terms(made) == documents.terms(whole)
    analyzed: list[str] = []
    real = analyzer.tokens
    monkeypatch.setattr(analyzer, "tokens", lambda text: analyzed.append(text) or real(text))
    analyzer.kept_tokens.cache_clear()
    documents._said_terms(first)
    assert len(analyzed) == 4
    documents._said_terms(later)
    assert analyzed[4:] == ["It retries three times now."]


def test_an_events_neighbours_lend_it_their_words_each_analyzed_once(memory, monkeypatch):
    """An event's context is its neighbours' words, the same as the joined text would
    analyze to; each neighbour's text is analyzed once for all the events it is beside."""
    from memvault.search import documents

    said = [
        ("prompt_submit", {"prompt": "The fetchUser call 超时 after 30 s"}),
        ("assistant_response", {"assistantResponse": "I'll add retries with a backoff."}),
        ("prompt_submit", {"prompt": "数据库连接超时了, don't retry writes"}),
        ("assistant_response", {"assistantResponse": "Reads retry three times now."}),
    ]
    memory.capture.observe_many([event("talk", n, *pair) for n, pair in enumerate(said)])
    stored = memory.store.events_after("talk", 0, limit=10)
    observations = memory.store.observations_of([e.seq for e in stored])
    assert len(observations) == 4
    texts = [documents.observation_text(o) for o in observations]
    for i, observation in enumerate(observations):
        context = [o for j, o in enumerate(observations) if j != i]
        draft = documents.observation_document(observation, "blast", context)
        others = "\n".join(t for j, t in enumerate(texts) if j != i)
        assert draft.terms[2] == documents.terms(others)
    analyzed: list[str] = []
    real = analyzer.tokens
    for module in (analyzer, documents):  # every way a document's words are analyzed
        monkeypatch.setattr(module, "tokens", lambda text: analyzed.append(text) or real(text))
    analyzer.kept_tokens.cache_clear()
    for i, observation in enumerate(observations):
        context = [o for j, o in enumerate(observations) if j != i]
        documents.observation_document(observation, "blast", context)
    assert sorted(t for t in analyzed if t in texts) == sorted(texts)  # each once
    assert not [a for a in analyzed for t in texts if t in a and a != t]  # never joined


def test_a_store_from_before_the_session_part_makes_its_sessions_again_with_replies(
    tmp_path, monkeypatch
):
    """Upgrading moves the session documents into their part of the index and makes them
    again from their events, so a session is found by its replies' words without waiting
    for it to get a new event."""
    from memvault.search import documents
    from memvault.store.contract import REST_PART

    home = tmp_path / "home"
    load = migrations.load
    with monkeypatch.context() as before:  # the index before its session part
        before.setattr(migrations, "load", lambda e: [m for m in load(e) if m.version < 16])
        for module in (
            "memvault.store.contract.index",
            "memvault.store.sqlite.fts5",
            "memvault.search.lexical",
        ):
            before.setattr(f"{module}.part_of", lambda kind: REST_PART)
            before.setattr(f"{module}.LEXICAL_PARTS", (REST_PART,))
        for module in ("memvault.store.sqlite.fts5", "memvault.store.sqlite.documents"):
            before.setattr(f"{module}.TABLES", {REST_PART: "documents_fts"})
        made = documents.session_document

        def without_replies(session, digest, *, project=None):
            said = "\n".join([*digest.requests, *digest.decisions])
            draft = made(session, digest, project=project)
            return dataclasses.replace(
                draft,
                terms=(draft.terms[0], documents.terms(said), *draft.terms[2:]),
                content_hash=documents.content_hash(draft.title, said),
            )

        before.setattr(documents, "session_document", without_replies)
        with Memory.open(home=home) as old:
            old.capture.observe_many(
                [
                    event("bisect", 0, "prompt_submit", {"prompt": "why did the build break"}),
                    event(
                        "bisect",
                        1,
                        "assistant_response",
                        {"assistantResponse": "The regression came with the vendored zlib."},
                    ),
                ]
            )
            old.index.index_now()
            assert not old.search("vendored zlib", project="blast", kinds=["session"])
    with Memory.open(home=home) as memory:
        memory.index.index_now()
        found = memory.search("vendored zlib", project="blast", kinds=["session"])
        assert [hit.document.key for hit in found] == ["bisect"]


def _busy_and_two_others(memory: Memory) -> None:
    """One session that talked about the websocket retry at length, two that touched it."""
    talk = [
        "the websocket reconnect retry is flaky on CI",
        "retry the websocket reconnect with backoff, it is still flaky",
        "the flaky websocket reconnect retry fails again",
        "log every websocket reconnect retry to find the flaky one",
        "the websocket reconnect retry passed, flaky no more?",
        "websocket reconnect retry flaky again after the rebase",
    ]
    events = [event("busy", n, "prompt_submit", {"prompt": text}) for n, text in enumerate(talk)]
    events += [
        event("one", 0, "prompt_submit", {"prompt": "why does the websocket reconnect hang"}),
        event("two", 0, "prompt_submit", {"prompt": "the retry of the upload is flaky"}),
    ]
    memory.capture.observe_many(events)
    memory.index.index_now()


def test_a_session_found_whole_leaves_room_for_other_sessions(memory):
    _busy_and_two_others(memory)
    hits = memory.search("websocket reconnect retry flaky", limit=6)
    sessions = [
        h.document.key if h.document.kind == "session" else h.document.session_id for h in hits
    ]
    assert sessions[0] == "busy"
    # Below its document, SESSION_HITS of its events, then the others before its rest.
    assert sessions.count("busy") == 1 + engine.SESSION_HITS
    assert {"one", "two"} <= set(sessions)


def test_events_searched_alone_keep_their_order(memory):
    _busy_and_two_others(memory)
    hits = memory.search("websocket reconnect retry flaky", limit=6, kinds=["observation"])
    assert [h.document.session_id for h in hits] == ["busy"] * 6  # no session stands for them
