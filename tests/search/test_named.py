"""A request that names code finds the sessions that touched it: a pasted test failure
shares its words with every session that pasted one, and its names with the session that
worked on the code under test (``search/lexical.py`` NAMED_WEIGHT)."""

from __future__ import annotations

import pytest

from memvault import Memory
from memvault.search import lexical
from tests.helpers import envelope

TRACE = """C:\\dev\\blast\\Blast.Test\\{test}.cs({line}): error test failed:
      {method} (12ms): Assert.AreEqual failed. Expected:<2>. Actual:<4>.
      Stack Trace:
         at blast.Test.{test}.{method}() in C:\\dev\\blast\\Blast.Test\\{test}.cs:line {line}
         at System.RuntimeMethodHandle.InvokeMethod(Object target, Void** arguments)
         at System.Reflection.MethodBaseInvoker.InvokeWithNoArgs(Object obj)"""

TRACED = [  # tests of other code, whose names share the request's words
    ("BatchProcessorTests", "CreateBatch_MultipleFiles_ReturnsAll"),
    ("BatchRunnerTests", "RunBatch_MultipleBatches_RunsAll"),
    ("AppDataStoreTests", "GetAll_MultipleEntries_ReturnsAll"),
    ("AppDataPathTests", "GetPath_Default_ReturnsAppData"),
    ("DataManagerTests", "GetAllData_MultipleItems_ReturnsAll"),
    ("HistoryManagerTests", "GetAllEntries_MultipleBatches_ReturnsAll"),
    ("BatchConfigurationTests", "Validate_EmptyName_Fails"),
    ("SettingsManagerTests", "GetAll_MultipleSettings_ReturnsAll"),
    ("AppDataLoaderTests", "LoadAll_MultipleFiles_ReturnsAll"),
    ("BatchHistoryTests", "GetAllBatches_Empty_ReturnsNone"),
    ("FileManagerTests", "GetAllFiles_MultipleFolders_ReturnsAll"),
    ("ManagerFactoryTests", "Create_BatchManager_ReturnsManager"),
]

REQUEST = TRACE.format(
    test="AppDataBatchManagerTests", line=171, method="GetAllBatches_MultipleBatches_ReturnsAll"
)


def event(session: str, n: int, hook: str, data: dict) -> dict:
    return envelope(
        session,
        n,
        hookType=hook,
        eventId=f"{session}:{n}",
        project="blast",
        cwd="/src/blast",
        data=data,
    )


def tool(session: str, n: int, name: str, path: str) -> dict:
    given = {"tool_name": name, "tool_input": {"file_path": path}, "tool_output": "ok"}
    return event(session, n, "post_tool_use", given)


def history() -> list[dict]:
    events = []
    for i, (test, method) in enumerate(TRACED):
        session = f"trace-{i}"
        pasted = TRACE.format(test=test, line=40 + i, method=method)
        events += [
            event(session, 0, "prompt_submit", {"prompt": pasted}),
            tool(session, 1, "Read", f"Blast.Test/{test}.cs"),
            event(
                session,
                2,
                "assistant_response",
                {
                    "assistantResponse": "I can see the issue: the test expects 2 but gets 4. "
                    "The failing assertion compares the count; fixing the expected value."
                },
            ),
        ]
    session = "batch-config"
    events += [
        event(
            session,
            0,
            "prompt_submit",
            {"prompt": "my batch configuration did not get saved when it has a search path"},
        ),
        tool(session, 1, "Read", "Blast.Core/Models/BatchConfiguration.cs"),
        tool(session, 2, "Edit", "Blast.Core/Services/AppDataBatchManager.cs"),
        event(
            session,
            3,
            "assistant_response",
            {"assistantResponse": "Saving now writes the configuration before returning."},
        ),
    ]
    return events


@pytest.fixture
def memory(tmp_path):
    with Memory.open(home=tmp_path / "home", embeddings="none") as opened:
        opened.capture.observe_many(history())
        opened.index.index_now()
        yield opened


def sessions(memory: Memory, request: str) -> list[str]:
    hits = memory.search(request, limit=10, project="blast")
    found = [hit.document.session_id or hit.document.key for hit in hits]
    return list(dict.fromkeys(found))


def test_a_failing_test_finds_the_session_that_worked_on_the_code_under_test(memory):
    assert sessions(memory, REQUEST)[:3].count("batch-config") == 1


def test_without_its_names_the_trace_finds_only_the_traces(memory, monkeypatch):
    """What the names add: asked by its words alone, the request's traces outrank the
    session that worked on the code (this fails if the test above passes for another
    reason)."""
    monkeypatch.setattr(lexical, "NAMED_WEIGHT", 0.0)
    assert "batch-config" not in sessions(memory, REQUEST)[:3]


def test_on_postgresql_a_failing_test_finds_the_session_too(
    tmp_path, monkeypatch, postgres_cluster
):
    """The names' ask (a phrase of a compound's parts, the context column alone, the
    sessions' counts) is the PostgreSQL engine's too."""
    monkeypatch.setenv("MEMVAULT_STORE_URL", postgres_cluster.database())
    with Memory.open(home=tmp_path / "home", embeddings="none") as opened:
        assert opened.store.engine == "postgres"
        opened.capture.observe_many(history())
        opened.index.index_now()
        assert sessions(opened, REQUEST)[:3].count("batch-config") == 1
        monkeypatch.setattr(lexical, "NAMED_WEIGHT", 0.0)
        assert "batch-config" not in sessions(opened, REQUEST)[:3]


def test_the_named_sessions_leave_every_other_result_where_it_was(memory, monkeypatch):
    """A session's named share is added within the sessions' own scale: the events,
    fragments and summaries a request finds keep their relevance."""

    def rest(weight: float) -> dict[str, float]:
        monkeypatch.setattr(lexical, "NAMED_WEIGHT", weight)
        hits = memory.search(REQUEST, limit=30, project="blast")
        return {h.document.key: h.relevance for h in hits if h.document.kind != "session"}

    named, plain = rest(1.0), rest(0.0)
    assert named and named == plain


def test_a_name_most_sessions_touched_adds_nothing(tmp_path, monkeypatch):
    with Memory.open(home=tmp_path / "home", embeddings="none") as memory:
        events = []
        for i, topic in enumerate(["login form", "dark mode", "router", "settings page"]):
            session = f"s{i}"
            events += [
                event(session, 0, "prompt_submit", {"prompt": f"work on the {topic}"}),
                tool(session, 1, "Edit", "src/index.ts"),
            ]
        memory.capture.observe_many(events)
        memory.index.index_now()
        request = "index.ts: the router crashes on startup after the settings page loads"

        def ranked(weight: float) -> list[tuple[str, float]]:
            monkeypatch.setattr(lexical, "NAMED_WEIGHT", weight)
            hits = memory.search(request, limit=10, project="blast")
            return [(h.document.key, h.relevance) for h in hits]  # a score ages as it runs

        assert ranked(1.0) == ranked(0.0)


def test_names_are_the_sessions_scale_when_their_words_said_nothing():
    """Where no session holds a word rarer than half of them, ``by_part`` scales the
    sessions by the other part's best (shares near 0): a session a rare name finds is then
    placed as it is where no session matched the words at all, first."""
    named = [(3, 4.0), (1, 1.0)]
    said_nothing = lexical._with_named([(1, 1e-7), (2, 5e-8)], named, pool=10)
    none_matched = lexical._with_named([], named, pool=10)
    assert said_nothing[0] == none_matched[0] == (3, 1.0)
