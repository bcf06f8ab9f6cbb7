"""Bad transcripts are reported by file and line; they never stop an import, and a line is
imported whole or not at all."""

from __future__ import annotations

import json

from memvault.importers import claude_code, cursor, driver, run_import
from tests.importers.conftest import events_of


def prompt(uuid: str, text: str, session: str = "s-bad") -> str:
    return json.dumps(
        {
            "type": "user",
            "sessionId": session,
            "cwd": "/home/dev/app",
            "uuid": uuid,
            "timestamp": "2026-11-30T10:00:00.000Z",
            "message": {"role": "user", "content": text},
        }
    )


def test_a_bad_line_is_reported_and_its_neighbours_imported(memory, tmp_path):
    path = tmp_path / "s-bad.jsonl"
    path.write_text(f"{prompt('p1', 'one')}\n{{not json\n[1, 2]\n{prompt('p2', 'two')}\n")

    report = run_import(memory, [claude_code.transcript(path)])

    assert [e.client_event_id for e in events_of(memory, "s-bad")] == ["p1", "p2"]
    assert [(p.file, p.line) for p in report.errors] == [(str(path), 2), (str(path), 3)]
    assert report.errors[0].error.startswith("not JSON: ")
    assert report.errors[1].error == "a JSON list, not an object"
    assert report.lines == 4


def test_a_truncated_last_line_is_imported_once_it_is_complete(memory, tmp_path):
    path = tmp_path / "s-bad.jsonl"
    whole = prompt("p2", "two")
    path.write_text(f"{prompt('p1', 'one')}\n{whole[:30]}")

    report = run_import(memory, [claude_code.transcript(path)])

    assert [e.client_event_id for e in events_of(memory, "s-bad")] == ["p1"]
    (problem,) = report.errors
    assert (problem.line, problem.error) == (2, "truncated last line (still being written?)")

    path.write_text(f"{prompt('p1', 'one')}\n{whole}\n")  # the host finished writing it
    again = run_import(memory, [claude_code.transcript(path)])

    assert (again.new, again.duplicates, again.error_count) == (1, 1, 0)
    assert [e.client_event_id for e in events_of(memory, "s-bad")] == ["p1", "p2"]


def test_a_file_that_is_not_json_lines_is_abandoned_and_the_next_one_read(memory, tmp_path):
    binary = tmp_path / "a.jsonl"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40 + b"\n" * 30)
    good = tmp_path / "s-bad.jsonl"
    good.write_text(prompt("p1", "one") + "\n")

    report = run_import(memory, [claude_code.transcript(binary), claude_code.transcript(good)])

    assert [e.client_event_id for e in events_of(memory, "s-bad")] == ["p1"]
    assert {p.file for p in report.errors} == {str(binary)}
    assert report.errors[-1].error.startswith("not a JSON lines file: its first 20 lines")
    assert report.error_count == driver.GIVE_UP_AFTER + 1


def test_an_unreadable_file_is_reported_and_the_others_imported(memory, tmp_path):
    gone = tmp_path / "gone.jsonl"
    good = tmp_path / "s-bad.jsonl"
    good.write_text(prompt("p1", "one") + "\n")
    legacy = tmp_path / "agent-transcripts" / "gone.txt"

    report = run_import(
        memory,
        [claude_code.transcript(gone), cursor.transcript(legacy), claude_code.transcript(good)],
    )

    assert [(p.file, p.line) for p in report.errors] == [(str(gone), 0), (str(legacy), 0)]
    assert report.errors[0].error.startswith("could not read: ")
    assert report.files == 3
    assert len(events_of(memory, "s-bad")) == 1


def test_an_overlong_line_is_skipped_without_being_loaded(memory, tmp_path, monkeypatch):
    monkeypatch.setattr(driver, "LINE_LIMIT", 1000)
    path = tmp_path / "s-bad.jsonl"
    path.write_text(f"{prompt('p1', 'x' * 5000)}\n{prompt('p2', 'two')}\n")

    report = run_import(memory, [claude_code.transcript(path)])

    assert [e.client_event_id for e in events_of(memory, "s-bad")] == ["p2"]
    assert [(p.line, p.error) for p in report.errors] == [(1, "line longer than 1000 bytes")]


def test_invalid_utf8_in_a_line_is_that_lines_problem(memory, tmp_path):
    path = tmp_path / "s-bad.jsonl"
    path.write_bytes(prompt("p1", "one").encode()[:-2] + b'\xff"}\n' + prompt("p2", "two").encode())

    report = run_import(memory, [claude_code.transcript(path)])

    assert [e.client_event_id for e in events_of(memory, "s-bad")] == ["p2"]
    assert [p.line for p in report.errors] == [1]


def test_a_lines_events_are_never_split_across_batches(memory, tmp_path):
    """Each line with a tool result yields two events here (text and the result)."""
    lines = []
    for n in range(5):
        lines.append(
            {
                "type": "assistant",
                "sessionId": "s-batch",
                "cwd": "/home/dev/app",
                "uuid": f"a{n}",
                "timestamp": "2026-11-30T10:00:00.000Z",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {}}],
                },
            }
        )
        lines.append(
            {
                "type": "user",
                "sessionId": "s-batch",
                "cwd": "/home/dev/app",
                "uuid": f"u{n}",
                "timestamp": "2026-11-30T10:00:01.000Z",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": f"t{n}", "content": "ok"},
                        {"type": "text", "text": f"and now step {n + 1}"},
                    ],
                },
            }
        )
    path = tmp_path / "s-batch.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    batches: list[list[str]] = []
    observe_many = memory.observe_many

    def recording(envelopes):
        batches.append([e["eventId"] for e in envelopes])
        return observe_many(envelopes)

    memory.observe_many = recording
    report = run_import(memory, [claude_code.transcript(path)], batch_size=3)

    assert report.new == 10
    assert all(len(batch) <= 3 for batch in batches)
    for n in range(5):
        (holding,) = [batch for batch in batches if f"claude-code:PostToolUse:t{n}" in batch]
        assert f"u{n}" in holding


def test_text_cut_inside_an_emoji_is_imported_with_a_replacement_character(memory, tmp_path):
    path = tmp_path / "s-bad.jsonl"
    cut = prompt("p1", "deployed ok").replace("deployed ok", "deployed ok \\ud83d")
    path.write_text(cut + "\n")
    report = run_import(memory, [claude_code.transcript(path)])
    assert report.errors == []
    (event,) = events_of(memory, "s-bad")
    assert event.payload["prompt"] == "deployed ok \ufffd"


def test_a_line_nested_100000_deep_loses_only_itself(memory, tmp_path):
    path = tmp_path / "s-bad.jsonl"
    deep = '{"type": "user", "message": ' + "[" * 100_000 + "]" * 100_000 + "}"
    lines = [prompt("p1", "one"), deep, prompt("p2", "two"), prompt("p3", "three")]
    path.write_text("\n".join(lines) + "\n")

    report = run_import(memory, [claude_code.transcript(path)])

    assert [e.client_event_id for e in events_of(memory, "s-bad")] == ["p1", "p2", "p3"]
    (problem,) = report.errors
    assert problem.line == 2
    assert problem.error == "JSON nested deeper than 128 levels, the most memvault reads"
