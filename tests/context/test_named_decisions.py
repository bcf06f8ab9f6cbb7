"""A prompt block tells of the decisions about code the request names: the user chose a
library, and a later build log that names it among hundreds of other words gets the
decision's line, which the relevance floor alone would not give it."""

from __future__ import annotations

import functools
import os
from dataclasses import replace

import pytest

from memvault import Memory
from memvault.analyzer import tokens
from memvault.domain import Document
from memvault.memory import telling
from memvault.memory.telling import DECISIONS_TOLD, decisions_named
from memvault.search import context as packing
from memvault.search.engine import Hit
from memvault.vault.remember import Draft
from tests.context.turns import Turns, remembered

CHOICE = "can we please use the CommandLineParser library for cli handling?"
HASHING = "can we please use the ParallelHasher for every hash?"
DIFFING = "can we use the DiffPlexDiffer for the side by side view?"
OWN_NAME = "can we please use the BlastMerge logger for every message?"
PROJECT = "blast-merge"

BUILD_LOG = "\n".join(
    [
        "Restore complete (0.6s)",
        r"  BlastMerge.ConsoleApp succeeded (0.5s) → bin\Debug\net9.0\BlastMerge.ConsoleApp.dll",
        r"  Blast.Core succeeded (0.5s) → Blast.Core\bin\Debug\net9.0\Blast.Core.dll",
        r'07:36:27.005  3>C:\Program Files\dotnet\dotnet.exe exec "C:\Program Files\dotnet'
        r'\sdk\9.0.301\Roslyn\bincore\csc.dll" /noconfig /unsafe- /checked- '
        "/nowarn:CA1724,CA1034,CA1000,CA2260,CA1515,CS1591,CA2225,IDE0022,IDE0058 /fullpaths",
        *(
            rf"/reference:C:\Users\runner\.nuget\packages\{package}\lib\net6.0\{dll}.dll"
            for package, dll in [
                ("castle.core", "Castle.Core"),
                ("commandlineparser", "CommandLine"),
                ("diffplex", "DiffPlex"),
                ("spectre.console", "Spectre.Console"),
                ("testableio.system.io.abstractions", "TestableIO.System.IO.Abstractions"),
            ]
        ),
        r"Error: D:\a\Blast\Blast.Test\BatchManagerTests.cs(33,21): error CS0117: "
        "'BlastAppData' does not contain a definition for 'ResetForTesting'",
        "Build FAILED. 1 Warning(s) 1 Error(s) Time Elapsed 00:00:03.71",
    ]
)


TURNS = Turns(PROJECT, "/src/blast")
event, said = TURNS.event, TURNS.said


@pytest.fixture
def memory(tmp_path):
    with Memory.open(home=tmp_path / "home") as opened:
        sessions = {
            "cli": said(
                "cli",
                CHOICE,
                "Switched the argument handling in Program.cs over to CommandLineParser "
                "verbs and options.",
                "/src/blast/Blast.ConsoleApp/Program.cs",
            ),
            "menu": said(
                "menu",
                "add a back option to every menu so the user can return where they were",
                "Every menu handler now offers Back, and the navigation keeps a stack.",
                "/src/blast/Blast.ConsoleApp/Menus/MenuHandler.cs",
            ),
            "pack": said(
                "pack",
                "publish the console app to winget from the release workflow",
                "The release workflow now builds the winget manifest after the NuGet push.",
                "/src/blast/.github/workflows/release.yml",
            ),
        }
        remembered(opened, sessions)
        yield opened


def test_a_build_log_naming_the_library_a_decision_chose_gets_the_decision(memory):
    packed = memory.context.context(project=PROJECT, query=BUILD_LOG)
    assert CHOICE in packed.text
    (decision,) = [
        b for b in packed.blocks if b["kind"] == "fragment" and "CommandLineParser" in b["text"]
    ]
    assert "decision" in decision["text"]


def test_without_the_named_decisions_the_floor_alone_misses_it(memory, monkeypatch):
    """The case the named decisions are for: the same block, read by the floor alone."""
    monkeypatch.setattr(telling, "DECISIONS_TOLD", 0)
    assert CHOICE not in memory.context.context(project=PROJECT, query=BUILD_LOG).text


def test_a_request_naming_none_of_its_code_gets_no_decision(memory):
    log = BUILD_LOG.replace("commandlineparser", "mono.options").replace("CommandLine", "Mono")
    assert CHOICE not in memory.context.context(project=PROJECT, query=log).text


def test_a_log_with_forward_slashes_names_the_library_as_well(memory):
    log = BUILD_LOG.replace("\\", "/")
    assert "\\" not in log
    assert CHOICE in memory.context.context(project=PROJECT, query=log).text


def test_a_decision_is_told_once_per_session_and_the_next_one_named_after_it(memory):
    """Those given already are left out before the block's few are chosen: a third decision
    the log names comes with the next request of the session."""
    for session, choice in [("hash", HASHING), ("diff", DIFFING)]:
        memory.capture.observe_many(
            said(session, choice, "Done.", "/src/blast/Blast.Core/Hasher.cs")
        )
        memory.pipeline.extract_session(session)
    memory.index.index_now()
    log = (
        BUILD_LOG + "\n  at Blast.Core.ParallelHasher.Run()\n  at Blast.Core.DiffPlexDiffer.Diff()"
    )
    memory.context.start_session(
        {"sessionId": "later", "project": PROJECT, "cwd": "/src/blast", "agentId": "cursor"}
    )
    blocks = [
        memory.context.context(project=PROJECT, query=log, session_id="later").text
        for _ in range(3)
    ]
    told = [[c for c in (CHOICE, HASHING, DIFFING) if c in block] for block in blocks]
    assert [len(t) for t in told] == [2, 1, 0]
    assert sorted(told[0] + told[1]) == sorted([CHOICE, HASHING, DIFFING])


def test_a_decision_the_session_start_listed_is_told_again_by_the_request_naming_it(memory):
    """The session start's standing memory lists the project's decisions among its other
    memories; the first request that names what one is about gets its line, once. What
    else the start gave is not given again."""
    started = memory.context.start_session(
        {"sessionId": "later", "project": PROJECT, "cwd": "/src/blast", "agentId": "cursor"}
    )
    assert CHOICE in started.context
    first, second = (
        memory.context.context(project=PROJECT, query=BUILD_LOG, session_id="later")
        for _ in range(2)
    )
    assert CHOICE in first.text
    assert fragments_in(first) == [decision_key(memory)]
    assert CHOICE not in second.text
    assert memory.store.injected("later")[("fragment", decision_key(memory))] is True


def test_a_listed_decision_the_request_names_and_the_floor_finds_is_told_once(memory):
    """Named and found by its words as well: told again all the same, in one line."""
    memory.context.start_session(
        {"sessionId": "later", "project": PROJECT, "cwd": "/src/blast", "agentId": "cursor"}
    )
    asked = "which library handles the cli arguments? should CommandLineParser stay?"
    assert fragments_in(memory.context.context(project=PROJECT, query=asked)) == [
        decision_key(memory)
    ]
    packed = memory.context.context(project=PROJECT, query=asked, session_id="later")
    assert fragments_in(packed) == [decision_key(memory)]


def test_a_decision_found_without_its_code_named_is_not_given_again(memory):
    """Only a decision whose code the request names is told twice: a request the floor
    finds it for by other words gets nothing the session start gave."""
    memory.context.start_session(
        {"sessionId": "later", "project": PROJECT, "cwd": "/src/blast", "agentId": "cursor"}
    )
    asked = "which library handles the cli arguments?"
    alone = memory.context.context(project=PROJECT, query=asked)
    assert decision_key(memory) in fragments_in(alone)
    packed = memory.context.context(project=PROJECT, query=asked, session_id="later")
    assert decision_key(memory) not in fragments_in(packed)
    assert memory.store.injected("later")[("fragment", decision_key(memory))] is False


def fragments_in(packed) -> list[str]:
    return [block["id"] for block in packed.blocks if block["kind"] == "fragment"]


def decision_key(memory) -> str:
    (key,) = [
        d.key
        for d in memory.store.list_documents("fragment", project=PROJECT)
        if "CommandLineParser" in d.summary
    ]
    return key


def test_an_old_decision_is_read_behind_many_newer_fragments_of_other_kinds(memory, monkeypatch):
    """The project's newest decisions are read, not its newest fragments: a long history's
    lessons and findings do not push its decisions out of reach."""
    monkeypatch.setattr(telling, "DECISIONS_READ", 2)
    for n, lesson in enumerate(
        [
            "The release workflow needs its tag pushed before the winget manifest.",
            "Menu handlers must return to the menu that opened them.",
            "Hashing large trees is faster with one worker per core.",
        ]
    ):
        draft = Draft(PROJECT, lesson, [f"lesson: {lesson}"], tags=["lesson"])
        draft.date = f"2026-11-2{n + 1}"
        memory.fragments.remember(draft)
    memory.index.index_now()
    newest = memory.store.list_documents("fragment", project=PROJECT, limit=2)
    assert all("decision" not in d.meta.get("tags", []) for d in newest)
    assert CHOICE in memory.context.context(project=PROJECT, query=BUILD_LOG).text


def test_the_projects_own_name_is_not_what_a_decision_is_about(memory):
    memory.capture.observe_many(
        said("own", OWN_NAME, "Done.", "/src/blast/Blast.ConsoleApp/Program.cs")
    )
    memory.pipeline.extract_session("own")
    memory.index.index_now()
    assert "BlastMerge" in BUILD_LOG
    packed = memory.context.context(project=PROJECT, query=BUILD_LOG)
    assert OWN_NAME not in packed.text
    assert CHOICE in packed.text


# -- which decisions are in force --------------------------------------------------------


def fragment(
    n: int,
    summary: str,
    *,
    confidence: float | None = 0.9,
    tags: tuple[str, ...] = ("agent-memory", "decision"),
    updated: str = "2026-11-20T10:00:00.000Z",
    source: str = "session s1",
) -> Document:
    meta = {"tags": list(tags), "confidence": confidence, "source": source}
    body = f"- decision: {summary}"
    return Document(
        n, "fragment", f"fragments/f{n}.md", "blast", None, f"f{n}", summary, body,
        0.8, updated, None, [], False, meta, 0, None,
    )  # fmt: skip


def test_only_confirmed_live_decisions_of_other_sessions_are_in_force():
    request = "ParallelBatchProcessor, CommandLineParser and NamedPipeClient fail to build"
    fragments = [
        fragment(1, "Use the CommandLineParser library for cli handling."),
        # An agent's passing "instead of", said once: not confirmed.
        fragment(2, "The app now uses ParallelBatchProcessor instead.", confidence=0.7),
        fragment(3, "Use ParallelBatchProcessor for hashing.", tags=("agent-memory", "lesson")),
        fragment(4, "[superseded] Use ParallelBatchProcessor for hashing."),
        fragment(5, "Keep ParallelBatchProcessor for hashing.", source="session asking"),
        # Written by a person (no confidence of its own): in force.
        fragment(6, "Talk to the daemon through NamedPipeClient.", confidence=None,
                 updated="2026-11-21T10:00:00.000Z"),
    ]  # fmt: skip
    named = decisions_named(request, fragments, session_id="asking")
    assert [d.id for d in named] == [6, 1]


def test_the_projects_own_assemblies_are_not_what_a_decision_is_about():
    """A build log names ``BlastMerge.Core`` whatever failed: a decision that names it is
    not about what the log is about, while one naming a class in it is."""
    log = r"BlastMerge.Core succeeded → bin\ktsu.BlastMerge.Core.dll; ParallelHasher.cs(3): error"
    own = fragment(1, "Log through the BlastMerge.Core logger only.")
    hasher = fragment(2, "Call ParallelHasher from the batch runner.")
    assert decisions_named(log, [own, hasher], project="blastmerge") == [hasher]
    assert decisions_named(log, [own, hasher]) == [own, hasher][:DECISIONS_TOLD]


def test_the_decisions_naming_the_most_come_first_then_the_newest():
    request = "retry_after in fetchUser is ignored by loadUser"
    fragments = [
        fragment(1, "Use fetchUser everywhere.", updated="2026-11-20T10:00:00.000Z"),
        fragment(2, "Call loadUser only from fetchUser.", updated="2026-11-19T10:00:00.000Z"),
        fragment(3, "Read retry_after in the client.", updated="2026-11-21T10:00:00.000Z"),
    ]
    assert [d.id for d in decisions_named(request, fragments)] == [2, 3][:DECISIONS_TOLD]


def test_a_session_line_does_not_quote_a_decision_a_fragment_above_it_says():
    session = Document(
        9, "session", "cli", PROJECT, "cli", "cli handling", "parse the arguments", "",
        0.5, "2026-11-20T10:00:00.000Z", None, [], False,
        {"files": ["Program.cs"], "decisions": [CHOICE[0].upper() + CHOICE[1:-1] + "."]}, 0, None,
    )  # fmt: skip
    hit = functools.partial(Hit, score=1.0, relevance=1.0, importance=0.8, recency=0.0)
    terms = tuple(tokens(CHOICE))
    alone = packing.pack([], [hit(session)], [], budget=1500, terms=terms)
    assert "decided: Can we please use the CommandLineParser library" in alone.text
    both = packing.pack([hit(fragment(1, CHOICE))], [hit(session)], [], budget=1500, terms=terms)
    (told,) = [b["text"] for b in both.blocks if b["kind"] == "session"]
    assert told.endswith("\n- [2026-11-20] parse the arguments (files: Program.cs)")
    assert any(CHOICE in b["text"] for b in both.blocks if b["kind"] == "fragment")


def test_the_decisions_kept_between_requests_follow_the_projects_fragments(memory):
    """Read once and kept while the project's fragments stay the same: a decision made or
    forgotten since the last request is seen by the next one."""
    assert CHOICE in memory.context.context(project=PROJECT, query=BUILD_LOG).text
    log = BUILD_LOG + "\n  at Blast.Core.ParallelHasher.Run()"
    assert HASHING not in memory.context.context(project=PROJECT, query=log).text
    memory.capture.observe_many(said("hash", HASHING, "Done.", "/src/blast/Blast.Core/Hasher.cs"))
    memory.pipeline.extract_session("hash")
    memory.index.index_now()
    assert HASHING in memory.context.context(project=PROJECT, query=log).text
    (choice,) = [
        d for d in memory.store.list_documents("fragment", project=PROJECT) if d.summary == CHOICE
    ]
    memory.fragments.forget(memory.recall.public_id(choice))
    memory.index.index_now()
    assert CHOICE not in memory.context.context(project=PROJECT, query=BUILD_LOG).text


def test_a_decision_confirmed_in_its_file_is_told_with_the_next_request(memory):
    """Confirming rewrites the fragment's properties and keeps its text (the text embedded
    is the same): the kept decisions still follow."""
    memory.capture.observe_many(
        said(
            "hash",
            "hashing the trees is slow, make it faster",
            "We'll use the ParallelHasher instead of the serial loop.",
            "/src/blast/Blast.Core/Hasher.cs",
        )
    )
    memory.pipeline.extract_session("hash")
    memory.index.index_now()
    log = BUILD_LOG + "\n  at Blast.Core.ParallelHasher.Run()"
    assert "ParallelHasher instead" not in memory.context.context(project=PROJECT, query=log).text
    (agents,) = [
        d
        for d in memory.store.list_documents("fragment", project=PROJECT)
        if "ParallelHasher" in d.summary
    ]
    assert agents.meta["confidence"] == 0.7  # the agent's alone: not in force yet
    path = memory.settings.vault_path / agents.key
    path.write_text(path.read_text().replace("confidence: 0.7", "confidence: 0.9"))
    later = path.stat().st_mtime + 10
    os.utime(path, (later, later))
    memory.index.index_now()
    assert "ParallelHasher instead" in memory.context.context(project=PROJECT, query=log).text


TEMP_FILES = "Use random file names instead, and handle the collisions."
TEST_LOG = "\n".join(
    [
        "Blast.Test test failed with 33 error(s) (3.7s)",
        r"  C:\dev\blast\Blast.Core\Services\SecureTempFiles.cs(165): error test failed:",
        "    SaveBatch_ValidBatch_SavesSuccessfully (265ms): Initialization method threw",
        "    System.IO.IOException: Unable to create a unique temporary directory.",
    ]
)


def test_a_request_naming_a_file_the_decisions_turn_changed_gets_the_decision(memory):
    """A decision is about the files the turn it was made in changed: a later failure in one
    of them names no word of the decision, and gets it all the same."""
    memory.capture.observe_many(
        said(
            "temp",
            "'Path.GetTempFileName()' is insecure. " + TEMP_FILES,
            "Temporary files now come from one helper that retries on a clash.",
            "/src/blast/Blast.Core/Services/SecureTempFiles.cs",
        )
    )
    memory.pipeline.extract_session("temp")
    memory.index.index_now()
    (decision,) = [
        d
        for d in memory.store.list_documents("fragment", project=PROJECT)
        if d.summary == TEMP_FILES
    ]
    assert "files: Blast.Core/Services/SecureTempFiles.cs" in decision.body
    assert TEMP_FILES in memory.context.context(project=PROJECT, query=TEST_LOG).text
    other = TEST_LOG.replace("SecureTempFiles.cs", "BatchManager.cs")
    assert TEMP_FILES not in memory.context.context(project=PROJECT, query=other).text


def test_a_history_without_its_edits_gives_the_files_the_agents_report_names(memory):
    """A chat exported without its edits (a Cursor history): the turn's reads and the
    agent's closing report are all there is of what it changed, and the decision is about
    the files the report names, by the paths the turn read or wrote them by."""
    session = "temp-export"
    memory.capture.observe_many(
        [
            event(session, 0, "prompt_submit", {"prompt": TEMP_FILES}),
            event(
                session,
                1,
                "post_tool_use",
                {
                    "tool_name": "Read",
                    "tool_input": {"file_path": "Blast.Core/Services/FileDiffer.cs"},
                    "tool_output": "Read file: Blast.Core/Services/FileDiffer.cs",
                },
            ),
            event(
                session,
                2,
                "post_tool_use",
                {
                    "tool_name": "Read",
                    "tool_input": {"file_path": "Blast.Core/Services/BatchManager.cs"},
                    "tool_output": "Read file: Blast.Core/Services/BatchManager.cs",
                },
            ),
            event(
                session,
                3,
                "assistant_response",
                {
                    "assistantResponse": "## Summary of Changes\n"
                    "### 1. Created SecureTempFiles.cs\n"
                    "- **Location**: `Blast.Core/Services/SecureTempFiles.cs`\n"
                    "### 2. Updated the services\n"
                    "- **FileDiffer.cs**: replaced both temporary files\n\n"
                    "BatchManager.cs did not need to be changed."
                },
            ),
        ]
    )
    memory.pipeline.extract_session(session)
    memory.index.index_now()
    (decision,) = [
        d
        for d in memory.store.list_documents("fragment", project=PROJECT)
        if d.summary == TEMP_FILES
    ]
    assert (
        "files: Blast.Core/Services/SecureTempFiles.cs, Blast.Core/Services/FileDiffer.cs"
        in decision.body
    )
    assert TEMP_FILES in memory.context.context(project=PROJECT, query=TEST_LOG).text
    other = TEST_LOG.replace("SecureTempFiles.cs", "BatchManager.cs")
    assert TEMP_FILES not in memory.context.context(project=PROJECT, query=other).text


def test_a_file_with_a_plain_name_is_named_with_its_folder():
    """ "store.ts" is in many folders: a request names the one a decision is about by its
    folder as well."""
    store = replace(
        fragment(1, "Keep sessions in one table."),
        body="- decision: Keep sessions in one table.\n- files: src/session/store.ts",
    )
    assert decisions_named("src/session/store.ts throws on empty keys", [store]) == [store]
    assert decisions_named(r"C:\app\src\session\store.ts(3): error", [store]) == [store]
    assert decisions_named("store.ts throws on empty keys", [store]) == []
    assert decisions_named("src/cache/store.ts throws on empty keys", [store]) == []


def test_a_file_its_sentence_names_already_is_one_thing_it_is_about():
    """``SecureTempFiles`` in the sentence and ``SecureTempFiles.cs`` in the files it changed
    are one name: a decision naming two things the request names comes first."""
    helper = replace(
        fragment(
            1, "Keep SecureTempFiles for every temp file.", updated="2026-11-21T10:00:00.000Z"
        ),
        body="- decision: Keep SecureTempFiles for every temp file.\n"
        "- files: Core/Services/SecureTempFiles.cs",
    )
    hasher = fragment(
        2, "Call ParallelHasher from BatchRunner.", updated="2026-11-20T10:00:00.000Z"
    )
    request = r"C:\dev\Core\Services\SecureTempFiles.cs(3): ParallelHasher in BatchRunner failed"
    assert decisions_named(request, [helper, hasher]) == [hasher, helper][:DECISIONS_TOLD]


def test_a_choice_directed_plainly_is_told_by_the_request_naming_what_it_chose(memory):
    """Seen in real sessions: the user opens a prompt with a plain directive naming a
    library by its repository's address. It is a decision, about the repository's name,
    and a later request naming that library gets its line."""
    directive = (
        "please use @https://github.com/ktsu-dev/AppDataStorage for serializing all of our "
        "persistent state across the application"
    )
    memory.capture.observe_many(
        said("store", directive, "Done.", "/src/blast/Blast.Core/Settings.cs")
    )
    memory.pipeline.extract_session("store")
    memory.index.index_now()
    asked = "the settings are lost on every restart, AppDataStorage writes an empty file"
    packed = memory.context.context(project=PROJECT, query=asked)
    (decision,) = [b for b in packed.blocks if b["kind"] == "fragment" and directive in b["text"]]
    assert "decision" in decision["text"]
    assert "Use AppDataStorage for serializing" in decision["text"]
