"""Board operations, one spec item at a time, on real files in a temporary vault."""

from __future__ import annotations

import pytest

from memvault.language import strings
from memvault.vault.board import Board, row_cells
from memvault.vault.lifecycle import SessionBoard
from memvault.vault.snapshot import CONTINUES, DECISIONS, SUPERSEDED, Snapshot
from tests.vault.conftest import tree_digest

# What the vault tests' boards write (the strings of the session board's own spec).
WORDS = strings("zh-Hant")
AUTO_SUMMARY, MANUAL_SUMMARY, UNSET_TOPIC = (
    WORDS.auto_summary,
    WORDS.manual_summary,
    WORDS.unset_topic,
)

ID = "2026-11-30-1432-cursor-main-agent"


def read_board(board: SessionBoard) -> Board:
    return board.board()


# -- identity (items 5, 6) -------------------------------------------------------------


def test_session_ids_are_local_date_time_and_agent(board):
    report = board.register("cursor-main-agent")
    assert report.ok and report.session_id == ID
    assert report.message == f"Your Memory Session ID is: {ID}"


def test_two_registrations_in_one_minute_get_distinct_deterministic_ids(board):
    ids = [board.register("cursor-main-agent").session_id for _ in range(3)]
    assert ids == [ID, f"{ID}-2", f"{ID}-3"]
    assert board.register("claude-code-main-agent").session_id == (
        "2026-11-30-1432-claude-code-main-agent"
    )


def test_an_archived_id_is_never_reused(board, vault):
    (vault / "memory" / "archive" / ID).mkdir(parents=True)
    assert board.register("cursor-main-agent").session_id == f"{ID}-2"


@pytest.mark.parametrize("name", ["Fix Login Bug!", "", "a/b", "x" * 80])
def test_task_wording_is_not_an_agent_name(board, name):
    report = board.register(name)
    assert not report.ok and report.session_id is None
    assert "agent name" in report.message


# -- auto registration (item 8) --------------------------------------------------------


def test_auto_registration_writes_the_default_idle_row_and_no_snapshot(board, vault):
    board.register("cursor-main-agent")
    row = read_board(board).get(ID)
    assert row_cells(row) == [
        ID,
        "cursor-main-agent",
        "未設定",
        "sessionStart 自動註冊，尚未整理主題。",
        "sessionStart, cursor-agent",
        "idle",
        "-",
        "2026-11-30 14:32",
        "2026-11-30 14:32",
    ]
    assert not (vault / "memory" / "sessions").exists()


def test_other_hosts_get_their_own_keyword(board):
    board.register("claude-code-main-agent")
    row = read_board(board).get("2026-11-30-1432-claude-code-main-agent")
    assert row.keywords == "sessionStart, claude-code-agent"


def test_a_failed_write_reports_no_session_id(board, vault):
    (vault / "memory").mkdir()
    (vault / "memory" / "index.md").mkdir()  # a folder where the file should be
    report = board.register("cursor-main-agent")
    assert not report.ok and report.session_id is None
    assert "Your Memory Session ID" not in report.message


# -- manual registration (item 9) ------------------------------------------------------


def test_manual_registration_is_active_with_a_snapshot_and_inferred_topic(board, vault):
    content = "## Current Context\n\nRenaming getUser to fetchUser. Tests pass.\n"
    report = board.register("cursor-main-agent", manual=True, content=Snapshot.parse(content))
    row = read_board(board).get(report.session_id)
    assert row.status == "active"
    assert row.topic == "Renaming getUser to fetchUser"
    assert row.summary == "Renaming getUser to fetchUser. Tests pass."
    assert row.keywords == "manual-registration, cursor-agent, session-snapshot"
    snapshot = (vault / "memory" / "sessions" / f"{ID}.md").read_text(encoding="utf-8")
    assert f"| Session ID | {ID} |" in snapshot and "| Status | active |" in snapshot


def test_manual_registration_falls_back_to_the_default_strings(board):
    report = board.register("cursor-main-agent", manual=True)
    row = read_board(board).get(report.session_id)
    assert (row.topic, row.summary) == (UNSET_TOPIC, MANUAL_SUMMARY)
    assert MANUAL_SUMMARY == "手動補註冊，已建立 session snapshot。"


def test_manual_registration_never_borrows_an_existing_row(board):
    board.register("cursor-main-agent")
    report = board.register("cursor-main-agent", manual=True)
    assert report.session_id == f"{ID}-2"
    assert len(read_board(board).rows) == 2


# -- update (items 10, 11) -------------------------------------------------------------


def test_update_promotes_idle_creates_the_snapshot_and_aligns_the_summary(board, clock, vault):
    board.register("cursor-main-agent")
    clock.advance(minutes=5)
    report = board.update(
        ID,
        Snapshot.parse(
            "## Current Context\n\nMigrating auth to OAuth. Login works again.\n"
            "## Decisions\n- Use PKCE\n"
        ),
    )
    assert report.ok, report.message
    row = read_board(board).get(ID)
    assert (row.status, row.updated_at, row.started_at) == (
        "active",
        "2026-11-30 14:37",
        "2026-11-30 14:32",
    )
    assert row.summary == "Migrating auth to OAuth. Login works again."
    assert row.topic == "Migrating auth to OAuth"
    assert row.referenced_by == [] and row.agent_name == "cursor-main-agent"
    snapshot = board.snapshot(ID)
    assert snapshot.metadata["Updated At"] == "2026-11-30 14:37"
    assert snapshot.metadata["Started At"] == "2026-11-30 14:32"
    assert snapshot.items(DECISIONS) == ["Use PKCE"]


def test_update_merges_instead_of_overwriting(board, clock):
    board.register(
        "cursor-main-agent",
        manual=True,
        content=Snapshot.parse(
            "## Current Context\nWorking on auth.\n## Decisions\n- Use PKCE\n- Keep sessions\n"
        ),
    )
    clock.advance(hours=1)
    board.update(
        ID, Snapshot.parse("## Decisions\n- [superseded] Keep sessions\n- Use refresh tokens\n")
    )
    snapshot = board.snapshot(ID)
    assert snapshot.items(DECISIONS) == ["Use PKCE", "Use refresh tokens"]
    assert snapshot.items(SUPERSEDED) == ["[superseded] Keep sessions (Decisions)"]
    assert snapshot.items("Current Context") == ["Working on auth."]


def test_update_of_a_session_not_on_the_board_is_refused(board):
    report = board.update(ID, Snapshot())
    assert not report.ok and "not on the board" in report.message


def test_explicit_topic_summary_and_keywords_win(board):
    board.register("cursor-main-agent")
    board.update(ID, Snapshot(), topic="Auth", summary="Short.", keywords="auth, oauth")
    row = read_board(board).get(ID)
    assert (row.topic, row.summary, row.keywords) == ("Auth", "Short.", "auth, oauth")


# -- continue and release (items 12, 13) -----------------------------------------------


def continued_pair(board, clock):
    source = board.register("cursor-main-agent", manual=True, topic="API naming").session_id
    clock.advance(minutes=1)
    current = board.register("cursor-main-agent").session_id
    return source, current


def test_continue_links_both_sides_and_changes_nothing_else_of_the_source(board, clock):
    source, current = continued_pair(board, clock)
    before = read_board(board).get(source)
    report = board.continue_from(current, source, agent="cursor-main-agent")
    assert report.ok, report.message
    after = read_board(board)
    assert after.get(source).referenced_by == [current]
    assert after.get(source).with_(referenced_by=[]) == before
    assert board.snapshot(current).items(CONTINUES) == [source]
    assert after.get(current).status == "active"
    assert after.get(current).topic == "API naming"
    assert len(after.rows) == 2


def test_continuing_twice_adds_no_duplicate_and_keeps_other_referrers(board, clock):
    source, current = continued_pair(board, clock)
    other = board.register("cursor-main-agent").session_id
    board.continue_from(other, source, agent="cursor-main-agent")
    board.continue_from(current, source, agent="cursor-main-agent")
    board.continue_from(current, source, agent="cursor-main-agent")
    assert read_board(board).get(source).referenced_by == [other, current]


def test_continue_without_an_id_registers_the_current_session_first(board, clock):
    source, _ = continued_pair(board, clock)
    report = board.continue_from(None, source, agent="cursor-main-agent")
    assert report.ok and report.details["registered"]
    assert report.message.startswith("Your Memory Session ID is: ")
    assert read_board(board).get(source).referenced_by == [report.session_id]
    assert read_board(board).get(report.session_id).status == "active"


def test_continue_from_an_unknown_source_is_incomplete_and_writes_nothing(board, clock, vault):
    board.register("cursor-main-agent")
    before = (vault / "memory" / "index.md").read_bytes()
    report = board.continue_from(ID, "2026-01-01-0000-cursor-main-agent", agent="x-agent")
    assert not report.ok and report.message.startswith("continuation incomplete")
    assert (vault / "memory" / "index.md").read_bytes() == before


def test_release_removes_both_sides_and_restores_dash_and_none(board, clock, vault):
    source, current = continued_pair(board, clock)
    board.continue_from(current, source, agent="cursor-main-agent")
    report = board.release(current, source)
    assert report.ok, report.message
    assert read_board(board).get(source).referenced_by == []
    assert board.snapshot(current).items(CONTINUES) == []
    text = (vault / "memory" / "sessions" / f"{current}.md").read_text(encoding="utf-8")
    assert "## Continues From\n\nNone\n" in text
    line = (vault / "memory" / "index.md").read_text(encoding="utf-8").splitlines()
    assert any(source in ln and "| - |" in ln for ln in line)


# -- reading (item 14) -----------------------------------------------------------------


def test_reading_prefers_active_and_stale_rows_with_meaningful_content(board, clock):
    idle = board.register("cursor-main-agent").session_id
    clock.advance(minutes=1)
    active = board.register("cursor-main-agent", manual=True, topic="Auth").session_id
    clock.advance(minutes=1)
    unnamed = board.register("cursor-main-agent", manual=True).session_id
    assert [r.session_id for r in board.rows()] == [active, unnamed, idle]


def test_reading_sees_a_hand_edit_that_keeps_the_files_size_and_time(board, vault, clock):
    """Rows are parsed once per text of the board: an edit in place that leaves the file's
    size and modification time as they were is still read."""
    import os

    session_id = board.register("cursor-main-agent", manual=True, topic="Auth").session_id
    assert [r.topic for r in board.rows()] == ["Auth"]
    index = vault / "memory" / "index.md"
    before = index.stat()
    index.write_text(index.read_text(encoding="utf-8").replace("Auth", "Bill"), encoding="utf-8")
    os.utime(index, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert index.stat().st_size == before.st_size
    assert [(r.session_id, r.topic) for r in board.rows()] == [(session_id, "Bill")]


# -- organize (item 15) ----------------------------------------------------------------


def test_organize_deletes_unreferenced_idle_rows_only(board, clock):
    idle = board.register("cursor-main-agent").session_id
    active = board.register("cursor-main-agent", manual=True, topic="Auth").session_id
    report = board.organize()
    assert report.ok and report.details["deleted"] == [idle]
    assert [r.session_id for r in read_board(board).rows] == [active]
    assert report.details["keptActive"] == [active]


def test_an_idle_row_with_a_session_file_stops_organize(board, vault):
    idle = board.register("cursor-main-agent").session_id
    other_idle = board.register("cursor-main-agent").session_id
    (vault / "memory" / "sessions").mkdir(parents=True)
    (vault / "memory" / "sessions" / f"{idle}.md").write_text("# Session\n", encoding="utf-8")
    before = (vault / "memory" / "index.md").read_bytes()
    report = board.organize()
    assert not report.ok and report.details["inconsistent"] == [idle]
    assert idle in report.message
    assert (vault / "memory" / "index.md").read_bytes() == before
    assert read_board(board).get(other_idle) is not None


@pytest.mark.parametrize(("days", "expected"), [(13, "active"), (15, "stale")])
def test_active_rows_go_stale_after_fourteen_days(board, clock, days, expected):
    session = board.register("cursor-main-agent", manual=True, topic="Auth").session_id
    clock.advance(days=days)
    report = board.organize()
    row = read_board(board).get(session)
    assert row.status == expected
    assert row.updated_at == "2026-11-30 14:32"  # Updated At is kept
    assert report.details["markedStale"] == ([session] if expected == "stale" else [])


def test_the_stale_threshold_is_configurable(board, clock):
    session = board.register("cursor-main-agent", manual=True, topic="Auth").session_id
    clock.advance(days=8)
    board.organize(stale_days=7)
    assert read_board(board).get(session).status == "stale"


def test_referenced_rows_stay_active_and_are_reported_protected(board, clock):
    source, current = continued_pair(board, clock)
    board.continue_from(current, source, agent="cursor-main-agent")
    clock.advance(days=30)
    report = board.organize()
    assert read_board(board).get(source).status == "active"
    assert report.details["protected"][source] == [current]


def test_a_row_named_in_another_snapshots_continues_from_is_protected(board, clock, vault):
    source = board.register("cursor-main-agent", manual=True, topic="Auth").session_id
    other = board.register("cursor-main-agent", manual=True, topic="Next").session_id
    path = vault / "memory" / "sessions" / f"{other}.md"
    path.write_text(
        path.read_text(encoding="utf-8").replace(
            "## Continues From\n\nNone", f"## Continues From\n\n- {source}"
        ),
        encoding="utf-8",
    )
    clock.advance(days=30)
    report = board.organize()
    assert read_board(board).get(source).status == "active"
    assert report.details["protected"][source] == [other]


def test_an_active_row_with_the_default_summary_and_no_snapshot_does_not_go_stale(board, clock):
    board.register("cursor-main-agent")
    text = board.index_path.read_text(encoding="utf-8").replace("| idle |", "| active |")
    board.index_path.write_text(text, encoding="utf-8")
    clock.advance(days=30)
    board.organize()
    assert read_board(board).get(ID).status == "active"
    assert read_board(board).get(ID).summary == AUTO_SUMMARY


def test_organize_never_archives_and_dry_run_changes_nothing(board, clock, vault):
    board.register("cursor-main-agent")
    board.register("cursor-main-agent", manual=True, topic="Auth")
    clock.advance(days=30)
    before = tree_digest(vault)
    report = board.organize(dry_run=True)
    assert report.ok and report.details["dryRun"]
    assert len(report.details["deleted"]) == 1 and len(report.details["markedStale"]) == 1
    assert tree_digest(vault) == before
    board.organize()
    assert not (vault / "memory" / "archive").exists()


# -- archive (item 16) -----------------------------------------------------------------


def test_archiving_an_idle_row_without_a_file_deletes_it(board, vault):
    board.register("cursor-main-agent")
    report = board.archive(ID)
    assert report.ok and report.details["action"] == "deleted"
    assert read_board(board).get(ID) is None
    assert not (vault / "memory" / "archive").exists()


def test_archive_is_refused_while_referenced_then_allowed_after_release(board, clock, vault):
    source, current = continued_pair(board, clock)
    board.continue_from(current, source, agent="cursor-main-agent")
    refused = board.archive(source)
    assert not refused.ok and current in refused.message
    assert read_board(board).get(source) is not None
    board.release(current, source)
    clock.advance(minutes=3)
    archived = board.archive(source)
    assert archived.ok and archived.details["action"] == "archived"
    folder = vault / "memory" / "archive" / source
    index = (folder / "index.md").read_text(encoding="utf-8")
    assert index.startswith(f"# Archived Session: {source}\n")
    for field in (
        "Original Status | active",
        "Referenced By | -",
        "Archived At | 2026-11-30 14:36",
    ):
        assert field in index
    assert "## Files\n\n- Session: ./session.md\n" in index
    assert (folder / "session.md").exists()
    assert not (vault / "memory" / "sessions" / f"{source}.md").exists()
    assert read_board(board).get(source) is None


def test_archiving_a_referencing_session_releases_its_sources(board, clock):
    source, current = continued_pair(board, clock)
    board.continue_from(current, source, agent="cursor-main-agent")
    report = board.archive(current)
    assert report.ok and report.details["releasedFrom"] == [source]
    assert read_board(board).get(source).referenced_by == []


def test_archive_can_be_forced_while_referenced(board, clock):
    source, current = continued_pair(board, clock)
    board.continue_from(current, source, agent="cursor-main-agent")
    assert board.archive(source, force=True).ok


def test_a_row_without_a_snapshot_is_deleted_never_archived_empty(board, vault):
    board.register("cursor-main-agent")
    text = board.index_path.read_text(encoding="utf-8").replace("| idle |", "| active |")
    board.index_path.write_text(text, encoding="utf-8")
    report = board.archive(ID)
    assert report.details["action"] == "deleted"
    assert not (vault / "memory" / "archive").exists()


def test_if_archiving_fails_the_row_and_snapshot_stay(board, vault):
    session = board.register("cursor-main-agent", manual=True, topic="Auth").session_id
    (vault / "memory" / "archive" / session).mkdir(parents=True)
    report = board.archive(session)
    assert not report.ok and "the row stays" in report.message
    assert read_board(board).get(session) is not None
    assert (vault / "memory" / "sessions" / f"{session}.md").exists()


# -- the rest of the vault (item 4) ----------------------------------------------------


def test_wiki_and_raw_are_untouched_by_every_operation(board, clock, vault):
    before = {
        "wiki": tree_digest(vault / "wiki"),
        "raw": tree_digest(vault / "raw"),
    }
    source, current = continued_pair(board, clock)
    board.update(current, Snapshot.parse("## Decisions\n- x\n"))
    board.continue_from(current, source, agent="cursor-main-agent")
    board.release(current, source)
    board.organize()
    board.archive(source)
    assert tree_digest(vault / "wiki") == before["wiki"]
    assert tree_digest(vault / "raw") == before["raw"]
    assert sorted(p.name for p in vault.iterdir()) == ["memory", "raw", "wiki"]


# -- hand-written rows (item 18) -------------------------------------------------------


HAND_WRITTEN = (
    "# Memory\n\nWritten by hand, kept by memvault.\n\n"
    "| Session ID | Agent Name | Topic | Summary | Keywords | Status | Referenced By | "
    "Started At | Updated At |\n"
    "|---|---|---|---|---|---|---|---|---|\n"
    "| 2026-11-25-1318-cursor-main-agent | cursor-main-agent | Wiki hooks | 設計 hook 的寫入流程 "
    "| hooks, wiki | active | - | 2026-11-25 13:18 | 2026-11-29 14:02 |\n"
    "\nFooter notes.\n"
)
HAND_ID = "2026-11-25-1318-cursor-main-agent"
HAND_LINE = HAND_WRITTEN.splitlines(keepends=True)[6]


def test_a_hand_written_row_survives_other_operations_byte_for_byte(board, clock, vault):
    (vault / "memory").mkdir()
    board.index_path.write_text(HAND_WRITTEN, encoding="utf-8")
    source, current = continued_pair(board, clock)
    board.update(current, Snapshot.parse("## Decisions\n- x\n"))
    board.continue_from(current, source, agent="cursor-main-agent")
    board.release(current, source)
    board.organize()
    board.archive(source)
    text = board.index_path.read_text(encoding="utf-8")
    assert HAND_LINE in text
    assert text.startswith("# Memory\n\nWritten by hand, kept by memvault.\n\n")
    assert text.endswith("\nFooter notes.\n")


def test_a_hand_written_row_can_be_continued_updated_and_archived(board, clock, vault):
    (vault / "memory").mkdir()
    board.index_path.write_text(HAND_WRITTEN, encoding="utf-8")
    current = board.register("cursor-main-agent").session_id
    assert board.continue_from(current, HAND_ID, agent="cursor-main-agent").ok
    assert read_board(board).get(HAND_ID).referenced_by == [current]
    assert board.update(HAND_ID, Snapshot.parse("## Decisions\n- hooks write via memvault\n")).ok
    assert board.snapshot(HAND_ID).items(DECISIONS) == ["hooks write via memvault"]
    assert board.release(current, HAND_ID).ok
    assert board.archive(HAND_ID).ok
    assert (vault / "memory" / "archive" / HAND_ID / "session.md").exists()
    text = board.index_path.read_text(encoding="utf-8")
    assert text.endswith("\nFooter notes.\n")
    assert read_board(board).get(HAND_ID) is None


def test_a_hand_edit_made_between_operations_is_read_not_overwritten(board, clock):
    board.register("cursor-main-agent", manual=True, topic="Auth")
    text = board.index_path.read_text(encoding="utf-8").replace("| Auth |", "| Auth (edited) |")
    board.index_path.write_text(text, encoding="utf-8")
    clock.advance(minutes=1)
    board.register("cursor-main-agent")
    assert read_board(board).get(ID).topic == "Auth (edited)"
