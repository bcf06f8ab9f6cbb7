"""What fragments add to the graph: their files, concepts, quoted errors, and decisions."""

from __future__ import annotations

from memvault.derive.entities import extract_graph, graph_of_fragment
from memvault.derive.fragments import extract_fragments
from memvault.vault.fragments import Fragment
from memvault.vault.remember import Draft
from tests.derive.reading import names, relations
from tests.pipeline.sessions import ROOT, edit, prompt, reply

DECISION = Draft(
    project="demo-app",
    summary="We'll use the refresh-token flow instead of forcing a new login.",
    facts=["decision: use the refresh-token flow", "files: src/auth.ts, ./src/api.ts"],
    tags=["decision", "auth"],
    date="2026-11-30",
)

FILE = """---
tags:
  - agent-memory
  - pitfall
  - deploy
project: demo-app
date: 2026-12-01
summary: The deploy script needs scp on CI.
files:
  - scripts/deploy.sh
---
- error: scripts/deploy.sh: line 12: rsync: command not found
- fix: edited scripts/deploy.sh
"""


def test_a_decision_fragment_is_a_decision_that_modifies_its_files():
    delta = graph_of_fragment("demo-app - 2026-11-30 - refresh tokens", DECISION)

    decision = "We'll use the refresh-token flow instead of forcing a new login"
    assert names(delta, "decision") == [decision]
    assert names(delta, "file") == ["src/api.ts", "src/auth.ts"]
    assert names(delta, "concept") == ["auth"]  # the kind tag is not a concept
    assert relations(delta, "modifies") == [
        (decision, "modifies", "src/api.ts"),
        (decision, "modifies", "src/auth.ts"),
    ]
    for entity in delta.entities.values():
        assert entity.sources == ["demo-app - 2026-11-30 - refresh tokens"]
        assert entity.first_seen == "2026-11-30T00:00:00.000Z"


def test_a_fragment_file_adds_its_files_concepts_and_quoted_errors(tmp_path):
    path = tmp_path / "fragment.md"
    path.write_text(FILE, encoding="utf-8")
    delta = graph_of_fragment("demo-app - 2026-12-01 - scp", Fragment.read(path))

    assert names(delta, "file") == ["scripts/deploy.sh"]
    assert names(delta, "concept") == ["deploy"]  # not agent-memory, not pitfall
    assert names(delta, "error") == ["rsync: command not found"]
    assert names(delta, "decision") == []
    assert ("rsync: command not found", "related_to", "scripts/deploy.sh") in relations(delta)


def test_a_fragment_not_marked_a_decision_adds_no_decision():
    lesson = Draft(
        project="demo-app",
        summary="We'll use retries from now on.",
        facts=["lesson: retry"],
        tags=["lesson"],
    )

    assert names(graph_of_fragment("x", lesson), "decision") == []


def test_an_extracted_decision_fragment_is_the_same_node_as_the_session_decision(ingest_steps):
    session = ingest_steps(
        "decide",
        [
            prompt("Logins fail after an hour"),
            reply("We'll use the refresh-token flow instead of forcing a new login."),
            edit(f"{ROOT}/src/auth.ts", "return undefined", "return refresh(token)"),
        ],
    )
    (draft,) = extract_fragments(*session, project="demo-app")

    from_events = extract_graph(*session).of_kind("decision")
    from_fragment = graph_of_fragment("f", draft).of_kind("decision")
    assert [e.ref for e in from_fragment] == [e.ref for e in from_events]
    assert names(graph_of_fragment("f", draft), "file") == ["src/auth.ts"]
