"""Session snapshots and the board as Obsidian's Properties and Dataview read them: a
snapshot opens with frontmatter memvault keeps up to date, the template below it keeps its
shape, a person's own keys stay, and a board that opens with frontmatter is still read."""

from __future__ import annotations

import yaml

from memvault.vault import frontmatter
from memvault.vault.board import Board
from memvault.vault.snapshot import DECISIONS, SESSION_TAG, Snapshot
from tests.vault.yaml_readers import read_with_node

ID = "2026-11-30-1432-cursor-main-agent"


def _snapshot_path(vault):
    return vault / "memory" / "sessions" / f"{ID}.md"


def _properties(text: str) -> dict:
    lines, _ = frontmatter.split(text)
    assert lines is not None, text[:200]
    return yaml.safe_load("\n".join(lines))


def test_a_written_snapshot_opens_with_frontmatter_properties_can_read(board, vault):
    board.register("cursor-main-agent", manual=True, content=Snapshot.parse("## Decisions\n- a\n"))
    text = _snapshot_path(vault).read_text(encoding="utf-8")
    assert _properties(text) == {
        "status": "active",
        "agent": "cursor-main-agent",
        "session": ID,
        "started": "2026-11-30T14:32",
        "updated": "2026-11-30T14:32",
        "tags": [SESSION_TAG],
    }
    # Below it, the template as the spec has it.
    _, body = frontmatter.split(text)
    assert body.startswith(f"# Session: {ID}\n\n## Metadata\n\n| Field | Value |\n")
    assert "## Decisions\n\n- a\n" in body


def test_obsidians_yaml_readers_read_the_snapshot_frontmatter_as_pyyaml_does(board, vault):
    board.register("cursor-main-agent", manual=True)
    text = _snapshot_path(vault).read_text(encoding="utf-8")
    lines, _ = frontmatter.split(text)
    (read,) = read_with_node(["\n".join(lines)])
    for reader in ("js-yaml", "yaml"):
        assert read[reader]["value"] == _properties(text), reader


def test_the_frontmatter_is_kept_up_to_date_and_read_back_without_touching_the_sections(
    board, vault, clock
):
    board.register("cursor-main-agent", manual=True, content=Snapshot.parse("## Decisions\n- a\n"))
    clock.advance(minutes=75)
    assert board.update(ID, Snapshot.parse("## Decisions\n- b\n")).ok
    text = _snapshot_path(vault).read_text(encoding="utf-8")
    assert _properties(text)["updated"] == "2026-11-30T15:47"
    snapshot = board.snapshot(ID)
    assert snapshot.items(DECISIONS) == ["a", "b"]
    assert snapshot.preamble == []
    assert snapshot.metadata["Updated At"] == "2026-11-30 15:47"
    assert text.count("---\n") == 2


def test_a_persons_own_frontmatter_keys_and_tags_stay_as_written(board, vault, clock):
    board.register("cursor-main-agent", manual=True, content=Snapshot.parse("## Decisions\n- a\n"))
    path = _snapshot_path(vault)
    text = path.read_text(encoding="utf-8")
    text = text.replace(
        "tags:\n  - memvault/session\n",
        "tags:\n  - memvault/session\n  - auth   # mine\n"
        "aliases: [Login rework]\nreviewed: 2026-12-01\n",
    )
    text = text.replace("| Updated At |", "| Project | demo-app |\n| Updated At |")
    path.write_text(text, encoding="utf-8")
    clock.advance(minutes=5)
    assert board.update(ID, Snapshot.parse("## Decisions\n- b\n")).ok
    after = path.read_text(encoding="utf-8")
    assert "  - auth   # mine\naliases: [Login rework]\nreviewed: 2026-12-01\n" in after
    properties = _properties(after)
    assert properties["tags"] == [SESSION_TAG, "auth"]
    assert (properties["project"], properties["updated"]) == ("demo-app", "2026-11-30T14:37")


def test_a_snapshot_written_by_hand_with_frontmatter_is_parsed_without_it(board, vault):
    path = _snapshot_path(vault)
    path.parent.mkdir(parents=True)
    path.write_text(
        "---\ncssclasses: [wide]\n---\n"
        f"# Session: {ID}\n\n## Metadata\n\n| Field | Value |\n|---|---|\n"
        f"| Session ID | {ID} |\n\n## Decisions\n\n- by hand\n",
        encoding="utf-8",
    )
    snapshot = board.snapshot(ID)
    assert (snapshot.preamble, snapshot.items(DECISIONS)) == ([], ["by hand"])
    assert snapshot.metadata["Session ID"] == ID
    again = Snapshot.parse(snapshot.render(ID))
    assert again.items(DECISIONS) == ["by hand"]
    assert again.properties[0] == "cssclasses: [wide]"  # first, as written
    assert _properties(snapshot.render(ID))["session"] == ID


def test_frontmatter_that_is_not_yaml_is_left_as_it_is_and_the_update_still_lands(
    board, vault, clock
):
    board.register("cursor-main-agent", manual=True, content=Snapshot.parse("## Decisions\n- a\n"))
    path = _snapshot_path(vault)
    _, body = frontmatter.split(path.read_text(encoding="utf-8"))
    path.write_text("---\nstatus: [unclosed\n---\n" + body, encoding="utf-8")
    clock.advance(minutes=1)
    assert board.update(ID, Snapshot.parse("## Decisions\n- b\n")).ok
    after = path.read_text(encoding="utf-8")
    assert after.startswith("---\nstatus: [unclosed\n---\n# Session:")
    assert board.snapshot(ID).items(DECISIONS) == ["a", "b"]


def test_a_snapshot_written_before_frontmatter_gets_it_at_its_next_update(board, vault, clock):
    board.register("cursor-main-agent", manual=True, content=Snapshot.parse("## Decisions\n- a\n"))
    path = _snapshot_path(vault)
    _, body = frontmatter.split(path.read_text(encoding="utf-8"))
    path.write_text(body, encoding="utf-8")  # as memvault wrote snapshots before
    clock.advance(minutes=1)
    assert board.update(ID, Snapshot.parse("## Decisions\n- b\n")).ok
    text = path.read_text(encoding="utf-8")
    assert _properties(text)["updated"] == "2026-11-30T14:33"
    assert frontmatter.split(text)[1] == body.replace(
        "14:32 |\n\n## Current", "14:33 |\n\n## Current"
    ).replace("- a\n", "- a\n- b\n")


def test_releasing_a_continuation_keeps_the_snapshot_frontmatter(board, vault, clock):
    source = board.register("cursor-main-agent", manual=True).session_id
    clock.advance(minutes=1)
    current = board.register("cursor-main-agent", manual=True).session_id
    assert board.continue_from(current, source, agent="cursor-main-agent").ok
    assert board.release(current, source).ok
    text = (vault / "memory" / "sessions" / f"{current}.md").read_text(encoding="utf-8")
    assert _properties(text)["session"] == current


def test_a_board_that_opens_with_frontmatter_is_read_changed_and_appended_to(board, vault, clock):
    index = vault / "memory" / "index.md"
    index.parent.mkdir(parents=True)
    head = "---\ntags: [memvault/board]\nnote: 'one row | one session'\n---\n# Memory Index\n\n"
    index.write_text(head, encoding="utf-8")
    first = board.register("cursor-main-agent").session_id
    assert index.read_text(encoding="utf-8").startswith(head)
    # A person appends a row by hand, as the protocol lets them.
    hand = (
        "| 2026-11-29-0900-cursor-main-agent | cursor-main-agent | by hand | s | k | active "
        "| - | 2026-11-29 09:00 | 2026-11-29 09:00 |\n"
    )
    with index.open("a", encoding="utf-8") as handle:
        handle.write(hand)
    clock.advance(minutes=1)
    assert board.update(first, Snapshot.parse("## Decisions\n- x\n")).ok
    text = index.read_text(encoding="utf-8")
    assert text.startswith(head) and text.endswith(hand)
    parsed = Board.parse(text)
    assert [row.session_id for row in parsed.rows] == [first, "2026-11-29-0900-cursor-main-agent"]
    assert parsed.get(first).status == "active"
