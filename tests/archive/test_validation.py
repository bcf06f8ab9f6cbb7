"""What an import refuses: formats and versions it does not read (nothing written), bad
lines (named by number), and paths that would leave their folder."""

from __future__ import annotations

import io
import json

import pytest

from memvault.archive import ArchiveError, import_stream
from memvault.errors import InvalidInput
from tests.archive.conftest import HEADER, archive, files, restore

GOOD = {"kind": "fragment", "path": "p - 2026-11-01 - ok.md", "text": "---\nproject: p\n---\n"}


def ndjson(*values) -> io.BytesIO:
    lines = [v if isinstance(v, str) else json.dumps(v) for v in values]
    return io.BytesIO(("\n".join(lines) + "\n").encode())


def nothing_written(memory) -> bool:
    return not files(memory.settings.vault_path) and memory.reads.sessions() == []


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ({**HEADER, "version": 2}, "version 2, newer than this memvault reads"),
        ({**HEADER, "format": "agentmemory-dump"}, "unknown archive format 'agentmemory-dump'"),
        ({**HEADER, "version": "one"}, "unknown memvault-export version 'one'"),
    ],
)
def test_an_unknown_format_or_a_newer_version_is_refused_and_nothing_written(
    target, header, message
):
    session = {"kind": "session", "id": "s1", "project": "p", "cwd": "/p"}

    with pytest.raises(ArchiveError, match=message):
        import_stream(target, ndjson(header, session, GOOD))

    assert nothing_written(target)


@pytest.mark.parametrize(
    "content",
    [b"", b"hello\nworld\n", b'{"kind": "session", "id": "s1", "project": "p", "cwd": "/p"}\n'],
)
def test_input_that_is_neither_an_archive_nor_an_agentmemory_export_is_refused(target, content):
    with pytest.raises(ArchiveError) as raised:
        import_stream(target, io.BytesIO(content))

    assert "memvault archive" in str(raised.value) or "empty" in str(raised.value)
    assert nothing_written(target)


def test_a_bad_line_is_reported_by_number_and_the_rest_is_imported(target):
    stream = ndjson(
        HEADER,
        '{"kind": "session", "id": ',
        ["not", "an", "object"],
        {"kind": "mystery"},
        {"kind": "event", "sessionId": "s1", "hookType": "prompt_submit"},
        {"kind": "session", "id": "s1", "project": "", "cwd": "/p"},
        GOOD,
        {"kind": "end", "records": {"fragment": 1, "session": 1, "event": 1}},
    )

    report = import_stream(target, stream)

    lines = {problem.line: problem.error for problem in report.problems}
    assert set(lines) == {2, 3, 4, 5, 6}
    assert lines[2].startswith("not JSON")
    assert "unknown record kind 'mystery'" in lines[4]
    assert "eventId" in lines[5]
    assert "project" in lines[6]
    assert report.counts["fragment"].new == 1
    assert report.total("refused") == 5


def test_an_event_the_observe_path_refuses_is_reported_with_its_line(target):
    event = {
        "kind": "event",
        "hookType": "prompt_submit",
        "sessionId": "s1",
        "eventId": "e1",
        "project": "p",
        "cwd": "/p",
        "timestamp": "2026-11-30T09:00:00.000Z",
    }

    report = import_stream(target, ndjson(HEADER, event, {**event, "eventId": "e2", "cwd": ""}))

    assert report.counts["event"].new == 1 and report.counts["event"].refused == 1
    assert report.problems[0].line == 3 and "cwd" in report.problems[0].error


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        ("fragment", "../outside.md"),
        ("fragment", "notes/../../outside.md"),
        ("fragment", "/tmp/outside.md"),
        ("fragment", "C:/outside.md"),
        ("fragment", "..\\outside.md"),
        ("fragment", ".obsidian/workspace.md"),
        ("fragment", "fine/but-not-markdown.sh"),
        ("snapshot", "memory/../../outside.md"),
        ("snapshot", "agent-memory/sneaky.md"),
        ("snapshot", "memory/index.md"),
        ("board", "memory/sessions/index.md"),
    ],
)
def test_a_path_that_would_leave_its_folder_is_refused(target, tmp_path, kind, path):
    report = restore(target, {"kind": kind, "path": path, "text": "---\nproject: p\n---\n"})

    assert report.counts[kind].refused == 1
    assert report.problems[0].line == 2
    assert not list(tmp_path.rglob("outside.md"))
    assert not files(target.settings.vault_path)


def test_a_link_inside_the_vault_does_not_carry_a_write_outside(target, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    target.settings.fragments_path.mkdir(parents=True)
    (target.settings.fragments_path / "linked").symlink_to(outside)

    report = restore(target, {**GOOD, "path": "linked/escape.md"})

    assert report.counts["fragment"].refused == 1
    assert "link" in report.problems[0].error
    assert not list(outside.iterdir())


def test_an_archive_cut_short_is_imported_but_flagged(target):
    report = import_stream(target, ndjson(*archive(GOOD, end=False)))

    assert report.counts["fragment"].new == 1
    assert not report.complete
    assert "cut short" in report.problems[0].error


def test_an_end_record_that_does_not_match_the_records_is_flagged(target):
    stream = ndjson(HEADER, GOOD, {"kind": "end", "records": {"fragment": 2}})

    report = import_stream(target, stream)

    assert not report.complete
    assert "holds" in report.problems[0].error


def test_records_after_the_end_are_refused(target):
    stream = ndjson(*archive(), GOOD)

    report = import_stream(target, stream)

    assert report.counts["fragment"].refused == 1
    assert not files(target.settings.vault_path)


def test_an_unknown_strategy_is_refused_before_anything_is_written(target):
    with pytest.raises(InvalidInput, match="strategy must be one of"):
        import_stream(target, ndjson(*archive(GOOD)), strategy="overwrite")

    assert nothing_written(target)
