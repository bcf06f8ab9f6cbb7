"""One import into a memory: sessions and events into the store, files into the vault,
then the derived work queued.

Events go through ``Memory.observe_many``, the path of ``POST /observe/bulk``: validated,
redacted, each with its synthetic observation, deduplicated by ``(sessionId, eventId)``
whatever the strategy, since the log is never rewritten. Nothing derived is imported:
each session that gained events gets a summary run queued, which the worker follows with
fragment extraction and the graph, and the search index catches up by itself. Fragments
the source had already extracted from those events are in the archive, so extraction
starts after them.
"""

from __future__ import annotations

import re
from typing import Any

from memvault.archive.report import At, ImportReport
from memvault.archive.vault_files import VaultFiles
from memvault.errors import InvalidInput
from memvault.ingest.envelope import SessionStart, refuse_nul, validate
from memvault.memory import Memory
from memvault.vault.board import SESSION_ID

STRATEGIES = ("merge", "skip", "replace")
EVENT_BATCH = 500
_SEQ_ID = re.compile(r"evt_([1-9]\d{0,18})")


class Restore:
    def __init__(self, memory: Memory, *, strategy: str, source: str, version: str) -> None:
        if strategy not in STRATEGIES:
            raise InvalidInput(
                f"strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}",
                fields=["strategy"],
            )
        self.memory = memory
        self.transfer = memory.transfer
        self.strategy = strategy
        self.report = ImportReport(source, version, strategy)
        self.files = VaultFiles(memory, strategy, self.report)
        self._batch: list[tuple[dict[str, Any], At]] = []
        self._checked: set[str] = set()  # sessions looked up before their first event
        self._created: set[str] = set()  # sessions this import created
        self._gained: set[str] = set()  # sessions that got new events
        self._extracted: set[tuple[str, str]] = set()  # (session, event id) extracted through
        self._through: dict[str, int] = {}  # session → where its extraction ended, here

    # -- sessions -------------------------------------------------------------------------

    def session(self, record: dict[str, Any], at: At) -> None:
        self.flush()
        try:
            start = validate(
                SessionStart,
                {
                    "sessionId": record.get("id"),
                    "project": record.get("project"),
                    "cwd": record.get("cwd"),
                    "title": record.get("title"),
                    "agentId": record.get("agentId"),
                },
                where="session",
            )
        except InvalidInput as exc:
            self.report.refuse("session", exc.message, at)
            return
        board = record.get("boardSessionId")
        if board is not None and (not isinstance(board, str) or not board.strip()):
            self.report.refuse("session", "`boardSessionId` must be a string or null", at)
            return
        if board is not None and not SESSION_ID.fullmatch(board):
            # It names the session's snapshot, memory/sessions/<id>.md, later on.
            self.report.refuse(
                "session",
                f"`boardSessionId` {board!r} is not a Memory Session ID (YYYY-MM-DD-HHMM-agent)",
                at,
            )
            return
        through = record.get("extractedThrough")
        if isinstance(through, str) and through:
            self._extracted.add((start.session_id, through))
        sid = start.session_id
        known = self.memory.reads.session(sid)
        if known is None or sid in self._created:
            self.transfer.restore_session(
                sid,
                project=start.project,
                cwd=start.cwd,
                agent_id=start.agent_id,
                title=start.title,
            )
            self._created.add(sid)
            self._link(sid, board, known.board_session_id if known else None, at)
            self.report.count("session", "new")
            return
        if self.strategy == "skip":
            self.report.count("session", "existing")
            return
        replace = self.strategy == "replace"
        changed = False
        if start.title and start.title != known.title and (replace or not known.title):
            self.transfer.retitle(known, start.title)
            changed = True
        linked = known.board_session_id
        if board and board != linked and (replace or not linked):
            changed = self._link(sid, board, linked, at) or changed
        outcome = ("replaced" if replace else "merged") if changed else "existing"
        self.report.count("session", outcome)

    def _link(self, session_id: str, board: str | None, replacing: str | None, at: At) -> bool:
        if not board or board == replacing:
            return False
        if self.transfer.board_row_taken(board):
            self.report.problem(
                "session",
                f"{session_id}: board row {board} is tied to another session here; not linked",
                at,
            )
            return False
        return self.transfer.link_board_row(session_id, board, replacing=replacing)

    # -- events ---------------------------------------------------------------------------

    def event(self, envelope: dict[str, Any], at: At) -> None:
        try:  # before its session is looked up: PostgreSQL cannot even be asked for it
            refuse_nul(envelope, keep=frozenset({"data"}))
        except InvalidInput as exc:
            self.report.refuse("event", exc.message, at)
            return
        self._batch.append((envelope, at))
        if len(self._batch) >= EVENT_BATCH:
            self.flush()

    def flush(self) -> None:
        """Store the events gathered so far."""
        batch, self._batch = self._batch, []
        pending = []
        for envelope, at in batch:
            if self._stored_here(envelope):
                self.report.count("event", "existing")
            else:
                pending.append((envelope, at))
        if not pending:
            return
        for envelope, _ in pending:
            sid = envelope.get("sessionId")
            if isinstance(sid, str) and sid not in self._checked:
                self._checked.add(sid)
                if self.memory.reads.session(sid) is None:
                    self._created.add(sid)
        result = self.memory.capture.observe_many([envelope for envelope, _ in pending])
        for error in result.errors:
            self.report.refuse("event", error.error, pending[error.index][1])
        for (envelope, _), outcome in zip(pending, result.results, strict=True):
            if outcome is None:
                continue
            if outcome.deduplicated:
                self.report.count("event", "existing")
            else:
                self.report.count("event", "new")
                self._gained.add(outcome.session_id)
            key = (outcome.session_id, str(envelope.get("eventId")))
            if key in self._extracted:
                self._through[key[0]] = outcome.event_seq

    def _stored_here(self, envelope: dict[str, Any]) -> bool:
        """Whether an event exported without a client id (named ``evt_<seq>`` by its
        sequence number) is that same event of this memory: importing an archive back
        into the memory it came from adds nothing."""
        match = _SEQ_ID.fullmatch(str(envelope.get("eventId") or ""))
        if match is None:
            return False
        seq = int(match.group(1))
        event = self.transfer.event_at(seq)
        return (
            event is not None
            and event.client_event_id is None
            and event.session_id == envelope.get("sessionId")
            and event.hook_type == envelope.get("hookType")
            and event.client_timestamp == envelope.get("timestamp")
        )

    # -- the end --------------------------------------------------------------------------

    def finish(self) -> ImportReport:
        """Store what is pending, and queue what is derived from it."""
        self.flush()
        for session_id, seq in self._through.items():
            self.transfer.mark_extracted(session_id, seq)
        for session_id in sorted(self._gained):
            self.memory.pipeline.request_summary(session_id)
        self.report.summaries_queued = len(self._gained)
        if self.files.board_written:
            self.memory.board.sync()
        self.memory.index.nudge()
        return self.report
