"""What each strategy does when the memory already holds something else at the same place."""

from __future__ import annotations

import pytest

from memvault.vault.remember import Draft
from tests.archive.conftest import restore

FRAGMENT_PATH = "demo-app - 2026-11-01 - Deploys need the VPN.md"
ARCHIVED = """---
tags:
  - agent-memory
project: demo-app
date: 2026-11-01
summary: Deploys need the VPN.
importance: 0.7
---
- deploy: connect the VPN first
- vpn: wireguard profile "ops"
"""
SNAPSHOT_PATH = "memory/sessions/2026-11-01-0900-cursor-main-agent.md"
ROW_A = (
    "| 2026-11-01-0900-cursor-main-agent | cursor-main-agent | VPN | Deploy needs VPN "
    "| vpn | active | - | 2026-11-01 09:00 | 2026-11-01 10:00 |"
)
ROW_B = (
    "| 2026-11-02-0900-cursor-main-agent | cursor-main-agent | CI | Fix CI "
    "| ci | idle | - | 2026-11-02 09:00 | 2026-11-02 09:00 |"
)
ROW_X = (
    "| 2026-11-03-0900-claude-code-main-agent | claude-code-main-agent | Docs | Write docs "
    "| docs | idle | - | 2026-11-03 09:00 | 2026-11-03 09:00 |"
)
HEADER = (
    "| Session ID | Agent Name | Topic | Summary | Keywords | Status | Referenced By "
    "| Started At | Updated At |\n|---|---|---|---|---|---|---|---|---|\n"
)


def board_text(*rows: str, title: str = "# Memory Index") -> str:
    return f"{title}\n\n{HEADER}" + "".join(f"{row}\n" for row in rows)


def fragment(path: str = FRAGMENT_PATH, text: str = ARCHIVED) -> dict:
    return {"kind": "fragment", "path": path, "text": text}


def put(memory, relative: str, text: str) -> None:
    path = memory.settings.vault_path / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")


def read(memory, relative: str) -> str | None:
    path = memory.settings.vault_path / relative
    return path.read_text(encoding="utf-8") if path.exists() else None


@pytest.fixture
def vault_with_conflicts(target):
    """The target already has its own version of the archive's fragment, snapshot and
    board, and an older copy of session s1."""
    put(target, f"agent-memory/{FRAGMENT_PATH}", ARCHIVED.replace("wireguard", "openvpn"))
    put(target, SNAPSHOT_PATH, "# Session: mine\n\nedited here\n")
    put(target, "memory/index.md", board_text(ROW_X, ROW_A.replace("VPN |", "VPN (mine) |", 1)))
    put(
        target, "agent-memory/demo-app - 2026-10-01 - Only here.md", "---\nproject: demo-app\n---\n"
    )
    target.store.ensure_session("s1", project="demo-app", cwd="/code/demo-app")
    return target


ARCHIVE = (
    {
        "kind": "session",
        "id": "s1",
        "project": "demo-app",
        "cwd": "/code/demo-app",
        "title": "VPN deploys",
        "boardSessionId": "2026-11-01-0900-cursor-main-agent",
    },
    fragment(),
    {"kind": "board", "path": "memory/index.md", "text": board_text(ROW_A, ROW_B)},
    {"kind": "snapshot", "path": SNAPSHOT_PATH, "text": "# Session: theirs\n"},
)


def test_merge_merges_fragments_adds_missing_rows_and_keeps_other_files(vault_with_conflicts):
    memory = vault_with_conflicts

    report = restore(memory, *ARCHIVE, strategy="merge")

    merged = read(memory, f"agent-memory/{FRAGMENT_PATH}")
    assert "openvpn" in merged and "wireguard" in merged  # facts of both, in one file
    assert report.counts["fragment"].merged == 1
    assert read(memory, SNAPSHOT_PATH) == "# Session: mine\n\nedited here\n"
    assert report.counts["snapshot"].skipped == 1
    board = read(memory, "memory/index.md")
    assert board.splitlines()[-3:] == [ROW_X, ROW_A.replace("VPN |", "VPN (mine) |", 1), ROW_B]
    assert (report.counts["board"].new, report.counts["board"].existing) == (1, 1)
    session = memory.reads.session("s1")
    assert (session.title, session.board_session_id) == (
        "VPN deploys",
        "2026-11-01-0900-cursor-main-agent",
    )
    assert report.counts["session"].merged == 1


def test_skip_writes_only_what_is_missing(vault_with_conflicts):
    memory = vault_with_conflicts
    before = {p: read(memory, p) for p in (f"agent-memory/{FRAGMENT_PATH}", SNAPSHOT_PATH)}
    board = read(memory, "memory/index.md")

    report = restore(memory, *ARCHIVE, fragment("demo-app - 2026-11-02 - New.md"), strategy="skip")

    assert {p: read(memory, p) for p in before} == before
    assert read(memory, "memory/index.md") == board
    assert read(memory, "agent-memory/demo-app - 2026-11-02 - New.md") == ARCHIVED
    assert (report.counts["fragment"].new, report.counts["fragment"].skipped) == (1, 1)
    assert (report.counts["board"].existing, report.counts["board"].skipped) == (1, 1)
    assert memory.reads.session("s1").title is None
    assert report.counts["session"].existing == 1


def test_replace_overwrites_files_of_the_same_path(vault_with_conflicts):
    memory = vault_with_conflicts

    report = restore(memory, *ARCHIVE, strategy="replace")

    assert read(memory, f"agent-memory/{FRAGMENT_PATH}") == ARCHIVED
    assert read(memory, SNAPSHOT_PATH) == "# Session: theirs\n"
    assert read(memory, "memory/index.md") == board_text(ROW_A, ROW_B)
    assert report.counts["fragment"].replaced == report.counts["snapshot"].replaced == 1
    assert (report.counts["board"].replaced, report.counts["board"].new) == (1, 1)
    assert memory.reads.session("s1").title == "VPN deploys"
    assert report.counts["session"].replaced == 1
    assert read(memory, "agent-memory/demo-app - 2026-10-01 - Only here.md")  # nothing deleted


@pytest.mark.parametrize("strategy", ["merge", "skip", "replace"])
def test_events_are_deduplicated_whatever_the_strategy(target, strategy):
    event = {
        "kind": "event",
        "hookType": "prompt_submit",
        "sessionId": "s1",
        "eventId": "s1-0",
        "project": "demo-app",
        "cwd": "/code/demo-app",
        "timestamp": "2026-11-30T09:00:00.000Z",
        "data": {"prompt": "first version"},
    }
    restore(target, event)

    report = restore(target, {**event, "data": {"prompt": "changed"}}, strategy=strategy)

    assert report.counts["event"].existing == 1
    (stored,) = target.reads.events("s1")
    assert stored.payload == {"prompt": "first version"}


def test_merge_folds_a_near_duplicate_into_the_fragment_already_there(target):
    mine = target.remember(
        Draft(
            project="demo-app",
            summary="Deploys need the VPN.",
            facts=["deploy: connect the VPN first"],
        )
    ).path

    report = restore(target, fragment(), strategy="merge")

    assert report.counts["fragment"].merged == 1
    assert not (target.settings.fragments_path / FRAGMENT_PATH).exists()
    assert "wireguard" in mine.read_text(encoding="utf-8")


def test_skip_keeps_a_near_duplicate_apart_rather_than_change_an_existing_file(target):
    mine = target.remember(
        Draft(project="demo-app", summary="Deploys need the VPN.", facts=["deploy: VPN first"])
    ).path
    before = mine.read_bytes()

    report = restore(target, fragment(), strategy="skip")

    assert report.counts["fragment"].new == 1
    assert mine.read_bytes() == before
    assert (target.settings.fragments_path / FRAGMENT_PATH).read_text() == ARCHIVED


def test_two_alike_fragments_of_one_archive_both_arrive_as_they_are(target):
    twin = ARCHIVED.replace("wireguard", "wireguard (twin)")

    report = restore(
        target, fragment(), fragment("demo-app - 2026-11-01 - Deploys need the VPN 2.md", twin)
    )

    assert report.counts["fragment"].new == 2
    assert (target.settings.fragments_path / FRAGMENT_PATH).read_text() == ARCHIVED


def test_an_archived_fragment_that_differs_is_kept_under_merge(target):
    path = f"_archive/{FRAGMENT_PATH}"
    put(target, f"agent-memory/{path}", "---\nproject: demo-app\n---\n- mine\n")

    report = restore(target, fragment(path), strategy="merge")

    assert report.counts["fragment"].skipped == 1
    assert read(target, f"agent-memory/{path}") == "---\nproject: demo-app\n---\n- mine\n"


def test_a_board_row_tied_to_another_session_is_not_linked_twice(target):
    target.store.ensure_session("mine", project="p", cwd="/p")
    target.store.link_board_session("mine", "2026-11-01-0900-cursor-main-agent")

    report = restore(target, ARCHIVE[0])

    assert target.reads.session("s1").board_session_id is None
    assert report.counts["session"].new == 1
    assert "tied to another session" in report.problems[0].error
