"""A memory with something of everything an archive carries, and helpers to read homes."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import pytest

from memvault import Memory
from memvault.archive import Export, import_document
from memvault.vault.remember import Draft
from tests.memory.test_rebuild import FIX
from tests.pipeline.test_service import step, work

HAND_NOTE = "- noted by hand: the staging database is rebuilt nightly\n"


@pytest.fixture
def source(tmp_path) -> Memory:
    with Memory.open(home=tmp_path / "source") as memory:
        fill(memory)
        yield memory


@pytest.fixture
def target(tmp_path) -> Memory:
    with Memory.open(home=tmp_path / "target") as memory:
        yield memory


def fill(memory: Memory) -> None:
    """Sessions with board rows and events (one sent without an event id), the
    pipeline's summaries and fragments, an agent's fragment, an archived fragment, a
    hand-edited snapshot and an archived board session."""
    memory.context.start_session(
        {"sessionId": "s1", "project": "demo-app", "cwd": "/code/demo-app"}
    )
    memory.observe_many(work("s1"))
    memory.observe_many([step("s2", n, hook, data) for n, (hook, data) in enumerate(FIX)])
    without_id = step("s2", 30, "prompt_submit", {"prompt": "Also check the staging deploy"})
    del without_id["eventId"]
    memory.observe(without_id)
    for session_id in ("s1", "s2"):
        memory.pipeline.summarize_session(session_id)
        memory.pipeline.extract_session(session_id)
    memory.remember(
        Draft(
            project="demo-app",
            summary="Releases are tagged from main only.",
            facts=["release: tag from main", "hotfix branches merge back first"],
            source="agent",
        )
    )
    archived = memory.remember(
        Draft(project="demo-app", summary="The old VPN needed a jump host.", facts=["vpn: old"])
    ).path
    folder = memory.settings.fragments_path / "_archive"
    folder.mkdir(exist_ok=True)
    shutil.move(archived, folder / archived.name)
    board_id = memory.reads.session("s1").board_session_id
    snapshot = memory.settings.vault_path / "memory" / "sessions" / f"{board_id}.md"
    with snapshot.open("a", encoding="utf-8", newline="") as handle:
        handle.write(HAND_NOTE)
    done = memory.board.register_session(manual=True, topic="Spike", content="Tried a queue.")
    memory.board.archive_session(done.session_id)


def export_bytes(memory: Memory, *, events: bool = True) -> bytes:
    out = io.BytesIO()
    Export(memory, events=events).write(out)
    return out.getvalue()


def files(root: Path) -> dict[str, bytes]:
    """Every markdown file under ``root`` (hidden ones left out), by relative path."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*.md"))
        if not any(part.startswith(".") for part in path.relative_to(root).parts)
    }


def events(memory: Memory) -> dict[tuple[str, str], tuple]:
    """Every stored event by (session, event id as exported)."""
    found = {}
    for session in memory.reads.sessions(limit=1000):
        for event in memory.reads.events(session.id, limit=10_000):
            event_id = event.client_event_id or f"evt_{event.seq}"
            found[(event.session_id, event_id)] = (
                event.hook_type,
                event.project,
                event.cwd,
                event.agent_id,
                event.client_timestamp,
                event.occurred_at,
                event.payload,
            )
    return found


HEADER = {"format": "memvault-export", "version": 1, "includes": {"events": True}}


def archive(*records: dict[str, Any], end: bool = True) -> list[dict[str, Any]]:
    """An archive as a list of records: the header, ``records``, and the end record."""
    counts: dict[str, int] = {}
    for record in records:
        counts[record["kind"]] = counts.get(record["kind"], 0) + 1
    tail = [{"kind": "end", "records": counts}] if end else []
    return [HEADER, *records, *tail]


def restore(memory: Memory, *records: dict[str, Any], strategy: str = "merge"):
    return import_document(memory, archive(*records), strategy=strategy)
