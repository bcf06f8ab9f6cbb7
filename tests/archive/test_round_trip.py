"""An export imported into an empty home is the same memory: the same events, the same
files byte for byte, and once the pipeline has run, the same summaries."""

from __future__ import annotations

import io
import json
from pathlib import Path

from memvault import Memory
from memvault.archive import import_stream
from memvault.archive.export import Export
from tests.archive.conftest import events, export_bytes, files


def test_an_archive_holds_a_header_then_records_by_kind_and_an_end(source):
    lines = [json.loads(line) for line in export_bytes(source).splitlines()]

    header, *records, end = lines
    assert header["format"] == "memvault-export" and header["version"] == 1
    assert header["includes"] == {"events": True}
    assert {"exportedAt", "memvaultVersion"} <= header.keys()
    kinds = [record["kind"] for record in records]
    order = ["session", "event", "fragment", "board", "snapshot"]
    assert kinds == sorted(kinds, key=order.index)
    assert end == {"kind": "end", "records": {kind: kinds.count(kind) for kind in order}}
    no_id = [r for r in records if r["kind"] == "event" and r["eventId"].startswith("evt_")]
    assert len(no_id) == 1 and no_id[0]["data"] == {"prompt": "Also check the staging deploy"}
    paths = [r["path"] for r in records if r["kind"] == "fragment"]
    assert any(path.startswith("_archive/") for path in paths)


def test_without_events_only_sessions_and_files_are_exported(source):
    lines = [json.loads(line) for line in export_bytes(source, events=False).splitlines()]

    header, *records = lines
    assert header["includes"] == {"events": False}
    kinds = {record["kind"] for record in records}
    assert "event" not in kinds
    assert {"session", "fragment", "board", "snapshot", "end"} <= kinds


def test_importing_into_an_empty_home_gives_the_same_memory(source, target):
    data = export_bytes(source)

    report = import_stream(target, io.BytesIO(data))

    assert report.complete and report.problem_count == 0
    assert events(target) == events(source)
    assert files(target.settings.vault_path) == files(source.settings.vault_path)
    for session_id in ("s1", "s2"):
        mine, theirs = target.reads.session(session_id), source.reads.session(session_id)
        assert (mine.project, mine.cwd, mine.board_session_id) == (
            theirs.project,
            theirs.cwd,
            theirs.board_session_id,
        )
        assert target.reads.session_summary(session_id) is None  # derived again, not imported
    assert report.summaries_queued == 2


def test_the_pipeline_derives_the_same_summaries_and_extracts_nothing_twice(source, target):
    import_stream(target, io.BytesIO(export_bytes(source)))
    fragments = files(target.settings.fragments_path)

    target.pipeline.worker.drain()

    for session_id in ("s1", "s2"):
        assert target.reads.session_summary(session_id) == source.reads.session_summary(session_id)
    # The fragments the source extracted came with the archive: none is written again.
    assert files(target.settings.fragments_path) == fragments


def test_fragments_the_source_extracted_and_archived_are_not_extracted_again(source, target):
    folder = source.settings.fragments_path
    for path in source.store.pipeline_fragments():
        moved = folder / "_archive" / Path(path).name
        (source.settings.vault_path / path).rename(moved)
    import_stream(target, io.BytesIO(export_bytes(source)))

    target.pipeline.worker.drain()

    assert files(target.settings.fragments_path) == files(folder)  # nothing live again
    for session_id in ("s1", "s2"):
        last = max(event.seq for event in target.reads.events(session_id))
        assert target.reads.session(session_id).extracted.seq == last


def test_an_imported_memory_is_searchable(source, target):
    import_stream(target, io.BytesIO(export_bytes(source)))

    hits = target.search("rsync", kinds=["fragment"])

    assert hits and all("rsync" in (hit.document.title + hit.document.body) for hit in hits)


def test_importing_again_writes_nothing_new(source, target):
    data = export_bytes(source)
    import_stream(target, io.BytesIO(data))
    before = files(target.settings.vault_path)

    again = import_stream(target, io.BytesIO(data))

    assert sum(again.total(outcome) for outcome in ("new", "merged", "replaced")) == 0
    assert again.counts["event"].existing == len(events(source))
    assert again.summaries_queued == 0
    assert files(target.settings.vault_path) == before


def test_an_archive_imported_into_the_memory_it_came_from_adds_nothing(source):
    before_events, before_files = events(source), files(source.settings.vault_path)

    report = import_stream(source, io.BytesIO(export_bytes(source)))

    assert report.total("new") == 0
    assert events(source) == before_events  # the event sent without an id included
    assert files(source.settings.vault_path) == before_files


def test_export_streams_a_large_log_in_bounded_batches(tmp_path):
    with Memory.open(home=tmp_path / "big") as memory:
        memory.observe_many(
            {
                "hookType": "prompt_submit",
                "sessionId": f"s{n % 7}",
                "project": "demo-app",
                "cwd": "/code/demo-app",
                "timestamp": "2026-11-30T10:00:00.000Z",
                "eventId": f"e{n}",
                "data": {"prompt": f"step {n}"},
            }
            for n in range(2500)
        )
        calls: list[int] = []
        log_after = memory.store.log_after

        def counted(seq: int, *, limit: int):
            calls.append(limit)
            return log_after(seq, limit=limit)

        memory.store.log_after = counted  # type: ignore[method-assign]
        lines = export_bytes(memory).splitlines()

    assert sum(1 for line in lines if b'"kind":"event"' in line) == 2500
    assert max(calls) <= 1000  # never the whole log at once


def test_the_export_reads_the_log_up_to_its_newest_event_at_its_start(tmp_path):
    def prompt(session_id: str, n: int) -> dict:
        return {
            "hookType": "prompt_submit",
            "sessionId": session_id,
            "project": "p",
            "cwd": "/p",
            "timestamp": "2026-11-30T10:00:00.000Z",
            "eventId": f"e{n}",
            "data": {},
        }

    with Memory.open(home=tmp_path / "home") as memory:
        memory.observe_many(prompt("s1", n) for n in range(37))
        records = Export(memory, events=True).records()
        seen = [next(records)]
        while seen[-1].get("kind") != "event":
            seen.append(next(records))
        memory.observe_many(
            prompt(session_id, n) for session_id in ("s1", "s2") for n in range(40, 45)
        )
        seen.extend(records)

    exported = [record for record in seen if record.get("kind") == "event"]
    assert [record["eventId"] for record in exported] == [f"e{n}" for n in range(37)]
    assert [record["id"] for record in seen if record.get("kind") == "session"] == ["s1"]
    assert seen[-1]["records"]["event"] == 37
