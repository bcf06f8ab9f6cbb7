"""The rule the pipeline marks an older decision superseded by, on decisions as sessions
make them: it takes a decision that replaces another on the same subject and files, and
leaves alone a refinement, another subject, other files, an older date, another project."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memvault.derive.supersede import Decision, replaced_by, superseded, supersedes


def decision(
    day: str, summary: str, files: str | None = None, *, project: str = "shop", id: str = ""
) -> Decision:
    facts = [f"decision: {summary}", "task: rework the session layer"]
    if files:
        facts.append(f"files: {files}")
    return Decision(id or summary, project, day, summary, tuple(facts), ("decision",))


REDIS = decision("2026-11-02", "We decided to store sessions in Redis.", "src/session/store.ts")
TOKENS = decision("2026-10-01", "Access tokens expire after 60 minutes.")
ZH = decision("2026-10-01", "我们决定用 Redis 存会话。", "src/session/store.ts")


@pytest.mark.parametrize(
    ("newer", "older", "why"),
    [
        (
            decision(
                "2026-11-20",
                "Decided to store sessions in Postgres instead of Redis.",
                "src/session/store.ts",
            ),
            REDIS,
            "replaces",
        ),
        (
            decision(
                "2026-11-20",
                "We decided to store sessions in Postgres.",
                "src/session/store.ts, src/db/schema.sql",
            ),
            REDIS,
            "another choice",
        ),
        (decision("2026-11-01", "Access tokens expire after 15 minutes."), TOKENS, "numbers"),
        (
            decision("2026-11-01", "我们决定改用 Postgres 存会话。", "src/session/store.ts"),
            ZH,
            "replaces",
        ),
    ],
)
def test_a_newer_contradicting_decision_on_the_same_subject_supersedes(newer, older, why):
    assert supersedes(newer, older) == why


@pytest.mark.parametrize(
    "newer",
    [
        # a refinement: a number added, not one changed
        decision(
            "2026-11-20",
            "Decided to keep sessions in Redis with a 30 minute TTL.",
            "src/session/store.ts",
        ),
        # another subject, same files
        decision("2026-11-20", "Decided to log every session write.", "src/session/store.ts"),
        # the same change made over other files
        decision(
            "2026-11-20",
            "Decided to store sessions in Postgres instead of Redis.",
            "src/cache/redis.ts",
        ),
        # files on one side only
        decision("2026-11-20", "Decided to store sessions in Postgres instead of Redis."),
        # not newer
        decision(
            "2026-11-02",
            "Decided to store sessions in Postgres instead of Redis.",
            "src/session/store.ts",
        ),
        # another project
        decision(
            "2026-11-20",
            "Decided to store sessions in Postgres instead of Redis.",
            "src/session/store.ts",
            project="blog",
        ),
        # another subject altogether
        decision("2026-11-20", "Decided to store uploads in S3.", "src/uploads/s3.ts"),
    ],
)
def test_what_does_not_replace_the_older_decision(newer):
    assert supersedes(newer, REDIS) is None


def test_only_decisions_are_superseded_and_superseded_lists_the_ids():
    newer = decision(
        "2026-11-20",
        "Decided to store sessions in Postgres instead of Redis.",
        "src/session/store.ts",
        id="new",
    )
    lesson = Decision("lesson", "shop", "2026-11-01", REDIS.summary, REDIS.facts, ("lesson",))
    older = decision("2026-11-02", REDIS.summary, "src/session/store.ts", id="old")
    assert superseded(newer, [older, lesson, TOKENS]) == ["old"]


def test_a_decision_read_after_later_ones_is_replaced_by_the_newest_that_replaces_it():
    files = "src/session/store.ts"
    postgres = decision(
        "2026-11-20", "Decided to store sessions in Postgres instead of Redis.", files
    )
    sqlite = decision(
        "2026-11-25", "We decided to store sessions in SQLite instead of Redis.", files
    )
    assert replaced_by(REDIS, [TOKENS, postgres, sqlite]) == sqlite.id
    assert replaced_by(REDIS, [TOKENS]) is None
    assert replaced_by(postgres, [REDIS]) is None  # an older one replaces nothing newer
    # The index keeps a fragment's date as a timestamp: the same day is still no later.
    same_day = replace(postgres, day="2026-11-02T00:00:00.000Z")
    assert replaced_by(REDIS, [same_day]) is None
    assert supersedes(same_day, REDIS) is None
    assert supersedes(replace(postgres, day="2026-11-03T00:00:00.000Z"), REDIS) is not None


def test_two_decisions_that_each_replace_something_are_not_one_subject_for_that():
    """Seen on real sessions: a user's "Use 'Path.GetRandomFileName()' instead." was retired
    by an agent's later "Search Paths: … (instead of just the single directory parameter)",
    the two sharing no more than "path" and "instead"."""
    older = decision("2025-06-05", "Use 'Path.GetRandomFileName()' instead.")
    newer = decision(
        "2025-06-06",
        "**Search Paths**: Collections of directories to search in (instead of just the"
        " single directory parameter).",
    )
    assert supersedes(newer, older) is None
    # The same choice said again in other words with what it replaces still does.
    again = decision(
        "2025-06-06", "Use Path.GetTempFileName() instead of Path.GetRandomFileName()."
    )
    assert supersedes(again, older) == "replaces"


@pytest.mark.parametrize(
    ("newer_confidence", "older_confidence", "retired"),
    [
        (0.7, 0.9, False),  # an agent's passing "instead of" and what the user said
        (0.7, None, False),  # … and what a person wrote
        (0.7, 0.8, False),  # … and what an LLM made
        (0.7, 0.7, True),
        (0.9, 0.7, True),
        (None, 0.9, True),
        (0.8, 0.9, True),
    ],
)
def test_a_decision_not_in_force_retires_none_that_is(newer_confidence, older_confidence, retired):
    """An unconfirmed decision (``derive.fragments.UNCONFIRMED``) is never told to agents:
    it must not retire one that is, as an agent's "Search Paths … (instead of …)" retired the
    user's "Use 'Path.GetRandomFileName()' instead." on real sessions."""
    older = replace(REDIS, confidence=older_confidence)
    newer = replace(
        decision(
            "2026-11-20",
            "Decided to store sessions in Postgres instead of Redis.",
            "src/session/store.ts",
        ),
        confidence=newer_confidence,
    )
    assert (supersedes(newer, older) is not None) is retired
