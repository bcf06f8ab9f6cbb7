"""The row's Summary: it follows Current Context only while memvault wrote it; a Summary a
person edited, an update supplied or a registration was given stays, and a Summary never
starts with a list marker."""

from __future__ import annotations

import pytest

from memvault.language import strings
from memvault.vault.snapshot import Snapshot, as_snapshot

AUTO_SUMMARY = strings("zh-Hant").auto_summary  # what the vault tests' boards write

ID = "2026-11-30-1432-cursor-main-agent"


def row(board):
    return board.board().get(ID)


def edit_cell(board, old: str, new: str) -> None:
    """Change one cell of the board file as a person does in Obsidian."""
    text = board.index_path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    board.index_path.write_text(text.replace(old, new), encoding="utf-8")


def context(text: str) -> Snapshot:
    return Snapshot.parse(f"## Current Context\n\n{text}\n")


def test_the_summary_follows_current_context_while_memvault_wrote_it(board, clock):
    board.register("cursor-main-agent")
    assert board.update(ID, context("Moving login to OAuth.")).ok
    assert row(board).summary == "Moving login to OAuth."
    clock.advance(minutes=5)
    assert board.update(ID, context("Login works with PKCE now.")).ok
    assert row(board).summary.startswith("Login works with PKCE now.")


def test_a_hand_edited_summary_survives_an_update_of_another_section(board, clock):
    board.register("cursor-main-agent")
    board.update(ID, context("Moving login to OAuth."))
    edit_cell(board, "| Moving login to OAuth. |", "| OAuth login, see the ADR. |")
    clock.advance(minutes=5)
    assert board.update(ID, Snapshot.parse("## Decisions\n- Use PKCE\n")).ok
    assert row(board).summary == "OAuth login, see the ADR."
    assert board.snapshot(ID).items("Decisions") == ["Use PKCE"]


def test_a_hand_edited_summary_survives_an_update_of_current_context(board, clock):
    board.register("cursor-main-agent")
    board.update(ID, context("Moving login to OAuth."))
    edit_cell(board, "| Moving login to OAuth. |", "| 登入改用 OAuth。 |")
    clock.advance(minutes=5)
    assert board.update(ID, context("Token refresh is next.")).ok
    assert row(board).summary == "登入改用 OAuth。"
    assert board.snapshot(ID).items("Current Context")[0] == "Token refresh is next."


def test_a_supplied_summary_wins_and_then_stays(board, clock):
    board.register("cursor-main-agent")
    board.update(ID, context("Moving login to OAuth."), summary="OAuth, by hand.")
    assert row(board).summary == "OAuth, by hand."
    clock.advance(minutes=5)
    board.update(ID, context("Token refresh is next."))
    assert row(board).summary == "OAuth, by hand."
    board.update(ID, Snapshot(), summary="OAuth done.")
    assert row(board).summary == "OAuth done."


def test_a_summary_given_at_registration_is_kept_at_the_first_update(board, clock):
    board.register("cursor-main-agent", summary="Login flow rework.")
    clock.advance(minutes=5)
    assert board.update(ID, context("Reading the auth module.")).ok
    assert row(board).summary == "Login flow rework."


def test_a_summary_given_at_manual_registration_is_kept(board, clock):
    board.register(
        "cursor-main-agent", manual=True, summary="Login flow rework.", content=context("A.")
    )
    clock.advance(minutes=5)
    board.update(ID, context("Reading the auth module."))
    assert row(board).summary == "Login flow rework."


def test_a_placeholder_summary_follows_current_context(board, clock):
    board.register("cursor-main-agent")
    assert row(board).summary == AUTO_SUMMARY
    board.update(ID, Snapshot.parse("## Decisions\n- Use PKCE\n"))
    assert row(board).summary == AUTO_SUMMARY  # nothing to go on yet
    board.update(ID, context("Moving login to OAuth."))
    assert row(board).summary == "Moving login to OAuth."


def test_a_derived_summary_at_manual_registration_follows_current_context(board, clock):
    board.register("cursor-main-agent", manual=True, content=context("Moving login to OAuth."))
    clock.advance(minutes=5)
    board.update(ID, context("Login works with PKCE now."))
    assert row(board).summary.startswith("Login works with PKCE now.")


def test_a_snapshot_written_before_summaries_were_recorded_still_follows(board, clock, vault):
    """A snapshot without the record: the row's Summary is memvault's when it is the gist
    of the snapshot as it was."""
    board.register("cursor-main-agent")
    board.update(ID, context("Moving login to OAuth."))
    path = vault / "memory" / "sessions" / f"{ID}.md"
    text = path.read_text(encoding="utf-8")
    assert "board-summary:" in text
    path.write_text(
        "\n".join(line for line in text.split("\n") if not line.startswith("board-summary:")),
        encoding="utf-8",
    )
    clock.advance(minutes=5)
    board.update(ID, context("Login works with PKCE now."))
    assert row(board).summary.startswith("Login works with PKCE now.")


def test_a_derived_summary_for_the_pipeline_respects_a_hand_edit(board, clock):
    board.register("cursor-main-agent")
    board.update(ID, context("Fix the login."), derived_summary="Fix the login. Result: done.")
    assert row(board).summary == "Fix the login. Result: done."
    clock.advance(minutes=5)
    board.update(ID, context("Next task."), derived_summary="Next task.")
    assert row(board).summary == "Next task."
    edit_cell(board, "| Next task. |", "| Mine. |")
    board.update(ID, context("Third task."), derived_summary="Third task.")
    assert row(board).summary == "Mine."


@pytest.mark.parametrize(
    "items",
    [
        ["Replacing the implicit flow with PKCE", "Tests pass"],
        "- Replacing the implicit flow with PKCE\n- Tests pass",
        "* Replacing the implicit flow with PKCE\n* Tests pass",
        "1. Replacing the implicit flow with PKCE\n2. Tests pass",
    ],
)
def test_a_summary_from_a_list_has_no_list_marker(board, items):
    board.register("cursor-main-agent")
    board.update(ID, as_snapshot({"Current Context": items}))
    written = row(board)
    assert written.summary == "Replacing the implicit flow with PKCE Tests pass"
    assert written.topic == "Replacing the implicit flow with PKCE"


def test_a_manual_registration_from_a_list_has_no_list_marker(board):
    content = as_snapshot({"Current Context": ["- 改用 PKCE 登入流程"]})
    report = board.register("cursor-main-agent", manual=True, content=content)
    assert board.board().get(report.session_id).summary == "改用 PKCE 登入流程"


def test_a_supplied_summary_loses_its_list_marker(board):
    board.register("cursor-main-agent")
    board.update(ID, Snapshot(), summary="- Replacing the implicit flow")
    assert row(board).summary == "Replacing the implicit flow"
