"""Session snapshots: the template, and a merge that never silently drops anything."""

from __future__ import annotations

from memvault.vault.snapshot import (
    CONTEXT,
    DECISIONS,
    SECTIONS,
    SUPERSEDED,
    Snapshot,
    as_snapshot,
    dropped,
    merge,
)

OLD = """# Session: 2026-11-30-1432-cursor-main-agent

## Metadata

| Field | Value |
|---|---|
| Session ID | 2026-11-30-1432-cursor-main-agent |
| Agent Name | cursor-main-agent |
| Topic | API naming |
| Status | active |
| Started At | 2026-11-30 14:32 |
| Updated At | 2026-11-30 14:40 |

## Current Context

Renaming the user API.

## Decisions

- Use the fetch prefix for every API call
- Keep REST for now

## Files / Artifacts

- src/api.ts

## Open Questions

- Do we need a deprecation period?

## Next Actions

- Run the tests

## Continues From

None

## Superseded / Resolved

None

## My own notes

Something a person added by hand.
"""


def test_the_template_has_every_section_in_order_and_none_for_empty_lists():
    text = Snapshot(metadata={"Session ID": "x"}).render("2026-11-30-1432-cursor-main-agent")
    assert text.startswith("# Session: 2026-11-30-1432-cursor-main-agent\n\n## Metadata\n")
    headings = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    assert headings == ["Metadata", *SECTIONS]
    for field in ("Session ID", "Agent Name", "Topic", "Status", "Started At", "Updated At"):
        assert f"| {field} |" in text
    assert text.count("\nNone\n") == len(SECTIONS)


def test_parse_and_render_round_trip_keeps_content_and_foreign_sections():
    snapshot = Snapshot.parse(OLD)
    assert snapshot.items(DECISIONS) == [
        "Use the fetch prefix for every API call",
        "Keep REST for now",
    ]
    assert snapshot.items("Continues From") == []
    again = Snapshot.parse(snapshot.render("2026-11-30-1432-cursor-main-agent"))
    assert again == snapshot
    assert "Something a person added by hand." in snapshot.render("x")


def test_an_omitted_decision_is_carried_over():
    merged = merge(Snapshot.parse(OLD), as_snapshot({"Decisions": ["Adopt GraphQL later"]}))
    assert merged.items(DECISIONS) == [
        "Use the fetch prefix for every API call",
        "Keep REST for now",
        "Adopt GraphQL later",
    ]
    assert dropped(Snapshot.parse(OLD), merged) == []


def test_a_superseded_decision_moves_under_superseded_resolved():
    update = "## Decisions\n\n- [superseded] Keep REST for now\n- Move to GraphQL\n"
    merged = merge(Snapshot.parse(OLD), Snapshot.parse(update))
    assert "Keep REST for now" not in merged.items(DECISIONS)
    assert merged.items(SUPERSEDED) == ["[superseded] Keep REST for now (Decisions)"]
    assert dropped(Snapshot.parse(OLD), merged) == []


def test_done_and_resolved_items_are_recorded():
    update = (
        "## Next Actions\n- [done] Run the tests\n- Ship it\n"
        "## Open Questions\n- [resolved] Do we need a deprecation period?\n"
    )
    merged = merge(Snapshot.parse(OLD), Snapshot.parse(update))
    assert merged.items("Next Actions") == ["Ship it"]
    assert merged.items("Open Questions") == []
    assert "[done] Run the tests (Next Actions)" in merged.items(SUPERSEDED)
    assert "[resolved] Do we need a deprecation period? (Open Questions)" in merged.items(
        SUPERSEDED
    )


def test_restating_an_item_updates_it_in_place_without_duplicating():
    update = "## Files / Artifacts\n- SRC/api.ts\n"
    merged = merge(Snapshot.parse(OLD), Snapshot.parse(update))
    assert merged.items("Files / Artifacts") == ["SRC/api.ts"]


def test_new_context_comes_first_and_old_context_stays():
    merged = merge(Snapshot.parse(OLD), as_snapshot({"Current Context": "Tests now pass."}))
    assert merged.items(CONTEXT) == ["Tests now pass.", "Renaming the user API."]


def test_dropped_reports_anything_missing():
    old = Snapshot.parse(OLD)
    lossy = Snapshot.parse(OLD)
    lossy.sections[DECISIONS] = []
    assert dropped(old, lossy) == [
        "Decisions: Use the fetch prefix for every API call",
        "Decisions: Keep REST for now",
    ]


def test_section_names_are_matched_loosely():
    snapshot = as_snapshot({"files/artifacts": "- a.py", "superseded/resolved": ["x"]})
    assert snapshot.items("Files / Artifacts") == ["a.py"]
    assert snapshot.items(SUPERSEDED) == ["x"]


def test_a_marker_at_the_end_of_an_item_works_like_one_in_front():
    update = (
        "## Decisions\n- Keep REST for now [superseded]\n- Move to GraphQL\n"
        "## Next Actions\n- Run the tests. [DONE]\n"
        "## Open Questions\n- Do we need a deprecation period? [resolved]\n"
    )
    merged = merge(Snapshot.parse(OLD), Snapshot.parse(update))
    assert merged.items(DECISIONS) == ["Use the fetch prefix for every API call", "Move to GraphQL"]
    assert merged.items("Next Actions") == []
    assert merged.items("Open Questions") == []
    assert merged.items(SUPERSEDED) == [
        "[superseded] Keep REST for now (Decisions)",
        "[resolved] Do we need a deprecation period? (Open Questions)",
        "[done] Run the tests. (Next Actions)",
    ]
    assert dropped(Snapshot.parse(OLD), merged) == []


def test_chinese_markers_are_accepted_in_front_and_at_the_end():
    old = Snapshot.parse(
        "## Decisions\n- 使用 REST\n- 保留舊的 session\n## Next Actions\n- 跑測試\n"
    )
    update = Snapshot.parse(
        "## Decisions\n- [已取代] 使用 REST\n- 保留舊的 session [已廢棄]\n"
        "## Next Actions\n- 跑測試 [已完成]\n"
    )
    merged = merge(old, update)
    assert merged.items(DECISIONS) == []
    assert merged.items("Next Actions") == []
    assert merged.items(SUPERSEDED) == [
        "[已取代] 使用 REST (Decisions)",
        "[已廢棄] 保留舊的 session (Decisions)",
        "[已完成] 跑測試 (Next Actions)",
    ]
    assert dropped(old, merged) == []


def test_brackets_inside_an_item_are_not_a_marker():
    update = "## Decisions\n- Mark finished tasks [done] in the tracker\n"
    merged = merge(Snapshot.parse(OLD), Snapshot.parse(update))
    assert "Mark finished tasks [done] in the tracker" in merged.items(DECISIONS)
