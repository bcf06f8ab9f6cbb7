"""The block a session starts with: the project's standing memory, short, each memory said
once."""

from __future__ import annotations

from memvault.memory import standing as standing_module
from memvault.memory.standing import STANDING_FRAGMENTS, STANDING_SESSIONS
from memvault.vault.remember import Draft
from tests.helpers import envelope


def _fragment(memory, summary: str, facts: list[str], importance: float = 0.8, **more) -> None:
    memory.remember(
        Draft(project="demo-app", summary=summary, facts=facts, importance=importance, **more)
    )


def test_a_fragment_that_says_its_summary_again_is_told_once_labelled_with_its_kind(memory):
    decided = "Refresh tokens are rotated on every use."
    _fragment(memory, decided, ["decision: Refresh tokens are rotated on every use"])
    _fragment(memory, "Passwords are hashed with argon2id", ["algorithm: argon2id"])
    items = {
        b["text"].split("\n")[0].split("**")[1].split(" - ")[-1]: b["text"]
        for b in memory.context.context(project="demo-app").items()
    }
    assert items["Refresh tokens are rotated on every use"].endswith(
        f"** (decision, importance 0.8): {decided}"
    )  # one line
    # A fact that says more than the summary stays under it.
    assert items["Passwords are hashed with argon2id"].endswith(
        "** (importance 0.8): Passwords are hashed with argon2id\n  - algorithm: argon2id"
    )


def test_a_clipped_summary_is_not_said_again_by_its_fact(memory):
    said = "Deploys go through the blue green switch " + "and wait for the health check " * 12
    _fragment(memory, said.strip(), [f"decision: {said.strip()}"])
    text = memory.context.context(project="demo-app").text
    assert "(decision, importance 0.8)" in text
    assert "  - decision:" not in text


def test_a_session_start_tells_the_newest_live_fragments_and_latest_sessions_only(memory):
    for n in range(STANDING_FRAGMENTS + 3):
        _fragment(memory, f"Rule {n}: loaders are named fetch{n}", [f"rule: fetch{n}"], 0.9)
    for n in range(STANDING_SESSIONS + 2):
        report = memory.board.register_session(
            manual=True, topic=f"Work item {n}", summary=f"Did item {n}", agent="cursor-main-agent"
        )
        assert report.ok, report.message
    packed = memory.context.context(project=None)
    kinds = [b["kind"] for b in packed.items()]
    assert kinds.count("fragment") <= STANDING_FRAGMENTS
    assert kinds.count("summary") == STANDING_SESSIONS
    fragments = memory.context.context(project="demo-app")
    told = [b["text"] for b in fragments.items() if b["kind"] == "fragment"]
    assert len(told) == STANDING_FRAGMENTS
    # The newest, all being as important: the last saved first, the first saved left out.
    assert "Rule 7:" in told[0] and not any("Rule 0:" in t for t in told)


def test_a_superseded_fragment_leaves_the_standing_block_and_a_live_one_takes_its_place(memory):
    for n in range(STANDING_FRAGMENTS + 2):
        _fragment(memory, f"Rule {n}: loaders are named fetch{n}", [f"rule: fetch{n}"], 0.9)
    older = memory.fragments.remember(
        Draft(
            project="demo-app",
            summary="Sessions are kept in Redis",
            facts=["store: redis"],
            importance=0.9,
        )
    )
    memory.fragments.remember(
        Draft(
            project="demo-app",
            summary="Sessions are kept in Postgres",
            facts=["store: postgres"],
            importance=0.9,
        ),
        supersedes=memory.fragments._relative(older.path),
    )
    told = [
        b["text"]
        for b in memory.context.context(project="demo-app").items()
        if b["kind"] == "fragment"
    ]
    assert len(told) == STANDING_FRAGMENTS  # five, all live
    assert not any("Redis" in t for t in told) and "Postgres" in told[0]


def test_what_an_agent_said_once_in_passing_is_not_the_projects_standing_memory(memory):
    """A session starts with the project's memory: what the user said or confirmed, what an
    agent declared as a decision, what a person or a tool saved. An agent's remark, said once
    in a session, is that session's: the prompt block tells it with the session."""
    saved = [
        ("The user chose argon2id for passwords.", 0.9, "session s1"),
        ("Decided: access tokens are JWTs.", 0.8, "session s2"),
        ("Deploys wait for the health check.", None, None),
        ("The API pool holds 20 connections.", 0.7, None),  # saved through a tool, no session
        ("The config loader reads the env first.", 0.7, "session s3"),
    ]
    for summary, confidence, source in saved:
        memory.remember(
            Draft(
                project="demo-app",
                summary=summary,
                facts=[f"finding: {summary}"],
                importance=0.8,
                confidence=confidence,
                source=source,
            )
        )
    text = memory.context.context(project="demo-app").text
    for summary, _, source in saved:
        assert (summary in text) == (source != "session s3"), summary


def test_a_confirmed_fragment_behind_many_newer_passing_remarks_is_still_told(memory, monkeypatch):
    """The block ranks a window of the project's newest fragments: one of the user's is
    found behind a window's worth of an agent's remarks, which the block leaves out."""
    monkeypatch.setattr(standing_module, "STANDING_READ", 3)
    _fragment(memory, "The user chose argon2id for passwords.", ["decision: argon2id"], 0.9,
              confidence=0.9, source="session s1", date="2026-11-01")  # fmt: skip
    for n in range(7):
        _fragment(memory, f"Remark {n}: the cache warms in {n + 2} seconds.",
                  [f"finding: warms in {n + 2} s"], 0.6, confidence=0.7,
                  source=f"session r{n}", date="2026-11-20")  # fmt: skip
    text = memory.context.context(project="demo-app").text
    assert "argon2id" in text
    assert "Remark" not in text


def test_a_days_memories_as_important_are_told_in_the_order_they_were_said(memory, monkeypatch):
    """A replayed or imported history is derived in any order. Where the block's cut falls
    among one day's memories as important as each other, the ones said last are told: by
    the last event of the session each came from, not by when each was derived."""
    monkeypatch.setattr(standing_module, "STANDING_FRAGMENTS", 2)
    said_at = {"s-morning": "08", "s-noon": "12", "s-evening": "18"}
    for session, hour in said_at.items():
        memory.observe(envelope(session, timestamp=f"2026-11-20T{hour}:00:00.000Z"))
    for session in ("s-evening", "s-morning", "s-noon"):  # derived in another order
        _fragment(memory, f"The user chose the {session} rule.", [f"decision: the {session} rule"],
                  confidence=0.9, source=f"session {session}", date="2026-11-20")  # fmt: skip
    text = memory.context.context(project="demo-app").text

    assert text.index("s-evening rule") < text.index("s-noon rule")
    assert "s-morning rule" not in text


def test_a_memory_from_no_session_goes_after_the_days_said_ones(memory, monkeypatch):
    """A fragment is dated by its author's day, its session's events in UTC: a session that
    ended late on the 19th (UTC) may have memories of the 20th. Saved without a session, a
    memory has no time of day to be told by, and goes after them."""
    monkeypatch.setattr(standing_module, "STANDING_FRAGMENTS", 1)
    memory.observe(envelope("s-night", timestamp="2026-11-19T23:30:00.000Z"))
    _fragment(memory, "The user chose the night rule.", ["decision: the night rule"],
              confidence=0.9, source="session s-night", date="2026-11-20")  # fmt: skip
    _fragment(memory, "Saved by hand: the hand rule.", ["rule: the hand rule"],
              date="2026-11-20")  # fmt: skip
    text = memory.context.context(project="demo-app").text

    assert "night rule" in text
    assert "hand rule" not in text
