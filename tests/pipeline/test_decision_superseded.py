"""The pipeline marks an older decision superseded when a later session decides otherwise
on the same subject and files; the older fragment then leaves the memory block."""

from __future__ import annotations

from datetime import UTC, datetime

from memvault.derive.fragments import UNCONFIRMED
from memvault.pipeline import extraction
from memvault.vault.fragments import Fragment
from memvault.vault.remember import Draft
from tests.pipeline.sessions import ROOT, conversation, edit, prompt, reply


def _session(memory, session: str, day: int, statement: str, old: str, new: str) -> None:
    steps = [
        prompt("Rework how the session layer keeps its sessions, please."),
        edit(f"{ROOT}/src/session/store.ts", old, new),
        reply(statement),
    ]
    start = datetime(2026, 11, day, 9, 0, tzinfo=UTC)
    assert memory.observe_many(conversation(session, steps, start=start)).failed == 0
    memory.pipeline.extract_session(session)


def _decide_postgres(memory) -> None:
    """A later session that decides against the Redis one."""
    statement = "We decided to store sessions in Postgres instead of Redis."
    _session(memory, "s-postgres", 20, statement, "redis", "postgres")


# An agent's statement of a choice in passing: not declared as a decision made ("we
# decided …", "Decision: …"), so held no surer than ``UNCONFIRMED`` when said once.
PASSING = "The session layer now keeps its sessions in Postgres instead of Redis."


def _decisions(memory) -> dict[str, Fragment]:
    found = {}
    for path in memory.settings.fragments_path.glob("*.md"):
        fragment = Fragment.read(path)
        if "decision" in fragment.properties.get("tags", []):
            found[path.stem] = fragment
    return found


def test_a_later_decision_against_an_earlier_one_marks_it_superseded(memory):
    _session(memory, "s-redis", 2, "We decided to store sessions in Redis.", "memory", "redis")
    ((older_id, older),) = _decisions(memory).items()
    assert "superseded_by" not in older.properties

    _decide_postgres(memory)
    decisions = _decisions(memory)
    assert len(decisions) == 2, decisions
    newer_id = next(name for name in decisions if name != older_id)
    marked = decisions[older_id]
    assert marked.properties["superseded_by"] == newer_id
    assert marked.summary.startswith("[superseded]")
    assert "superseded_by" not in decisions[newer_id].properties

    block = memory.context.context(project="demo-app", query="how are sessions stored")
    assert "Postgres" in block.text
    assert older_id not in block.text


def test_an_earlier_decision_read_after_the_later_one_is_superseded_all_the_same(memory):
    """Sessions reach the pipeline in any order (a backlog, an import, sessions idling at
    different times): the outcome is the one their days give, not the order they came in."""
    _decide_postgres(memory)
    ((newer_id, _),) = _decisions(memory).items()
    _session(memory, "s-redis", 2, "We decided to store sessions in Redis.", "memory", "redis")
    decisions = _decisions(memory)
    older_id = next(name for name in decisions if name != newer_id)
    assert decisions[older_id].properties["superseded_by"] == newer_id
    assert decisions[older_id].summary.startswith("[superseded]")
    assert "superseded_by" not in decisions[newer_id].properties


def test_a_decision_on_another_subject_leaves_the_earlier_one_alone(memory):
    _session(memory, "s-redis", 2, "We decided to store sessions in Redis.", "memory", "redis")
    _session(memory, "s-log", 20, "We decided to log every cache miss.", "redis", "redis+log")
    assert all("superseded_by" not in f.properties for f in _decisions(memory).values())


def test_an_older_decision_behind_many_newer_fragments_of_other_kinds_is_superseded(
    memory, monkeypatch
):
    """The project's newest decisions are read for those a new one replaces, not its newest
    fragments of any kind: a long history's lessons do not hide the decision it revisits."""
    monkeypatch.setattr(extraction, "DECISIONS_READ", 2)
    _session(memory, "s-redis", 2, "We decided to store sessions in Redis.", "memory", "redis")
    ((older_id, _),) = _decisions(memory).items()
    for day, lesson in [
        (10, "The release workflow needs its tag pushed before the manifest is built."),
        (11, "Menu handlers must return to the menu that opened them."),
    ]:
        memory.fragments.remember(
            Draft("demo-app", lesson, [f"lesson: {lesson}"], tags=["lesson"], date=f"2026-11-{day}")
        )
    memory.index.index_now()
    newest = memory.store.list_documents("fragment", project="demo-app", limit=2)
    assert all("decision" not in d.meta.get("tags", []) for d in newest)

    _decide_postgres(memory)
    assert _decisions(memory)[older_id].properties["superseded_by"]


def _users_redis(memory) -> tuple[str, Fragment]:
    steps = [
        prompt(
            "Rework how the session layer keeps its sessions: we decided to store them in Redis."
        ),
        edit(f"{ROOT}/src/session/store.ts", "memory", "redis"),
        reply("Done, the store now writes to Redis."),
    ]
    start = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
    assert memory.observe_many(conversation("s-user", steps, start=start)).failed == 0
    memory.pipeline.extract_session("s-user")
    ((older_id, older),) = _decisions(memory).items()
    assert older.properties["confidence"] > UNCONFIRMED  # the user's own words
    return older_id, older


def test_an_agents_passing_instead_of_leaves_the_users_decision_in_force(memory):
    """What the user decided stays told until something as sure replaces it: an agent's
    "instead of", said once, is a decision held too loosely to tell, and retires nothing."""
    older_id, older = _users_redis(memory)
    _session(memory, "s-postgres", 20, PASSING, "redis", "postgres")  # the agent's, once
    decisions = _decisions(memory)
    assert len(decisions) == 2, decisions
    assert "superseded_by" not in decisions[older_id].properties
    block = memory.context.context(project="demo-app", query="how are sessions stored in Redis")
    assert older.summary in block.text


def test_the_agents_decision_confirmed_later_retires_the_users_older_one(memory):
    """Said again by the user in a later session, the agent's decision is merged into its
    fragment, held as sure as the user's, and then replaces it."""
    older_id, _ = _users_redis(memory)
    _session(memory, "s-postgres", 20, PASSING, "redis", "postgres")
    assert "superseded_by" not in _decisions(memory)[older_id].properties
    steps = [
        prompt(PASSING),
        edit(f"{ROOT}/src/session/store.ts", "redis", "postgres"),
        reply("The session store writes to Postgres now."),
    ]
    start = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
    assert memory.observe_many(conversation("s-again", steps, start=start)).failed == 0
    memory.pipeline.extract_session("s-again")
    decisions = _decisions(memory)
    assert len(decisions) == 2, decisions  # merged into the agent's, not a third
    newer_id = next(name for name in decisions if name != older_id)
    assert decisions[newer_id].properties["confidence"] > UNCONFIRMED
    assert decisions[older_id].properties["superseded_by"] == newer_id
