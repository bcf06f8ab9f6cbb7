"""Capture: one hook event or many, from envelope to stored event, at once.

Each event is validated, redacted and given its synthetic observation (``prepare``), then
appended by the store's writer. What follows a store is not capture's to decide: it is
handed ``on_stored`` (how many new events were stored: the ingest rate, the indexer's
nudge), ``on_turn_end`` (a session's turn ended: its summary is due) and ``on_compacted``
(a host compacted a session's conversation at a time: what memory gave it before then is
gone from the agent's context), and calls them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memvault import jsontext
from memvault.domain import AppendFailure, AppendResult, NewEvent, iso, utc_now
from memvault.errors import InvalidInput, StoreFailure
from memvault.ingest import INLINE_DATA_CHARS, prepare
from memvault.ingest.envelope import Envelope, validate
from memvault.ingest.redact import Redactor
from memvault.store import AppendOutcome, Store

log = logging.getLogger(__name__)

BULK_CHUNK = 1000
# Host events that end a turn: a signal to bring the session's summary up to date.
TURN_ENDS = frozenset({"stop", "session_end", "subagent_stop"})
# A host's compaction of a session's conversation (Claude Code's PreCompact, Cursor's
# preCompact, Gemini's PreCompress): its earlier context is replaced by a summary. Before it,
# not after: Claude Code's SessionStart that follows a compaction asks for memory again.
COMPACTION = "pre_compact"


@dataclass(slots=True)
class ObserveResult:
    observation_id: str
    session_id: str
    event_id: str | None
    event_seq: int
    deduplicated: bool

    @classmethod
    def of(cls, result: AppendResult) -> ObserveResult:
        return cls(
            result.observation_id,
            result.session_id,
            result.client_event_id,
            result.event_seq,
            result.deduplicated,
        )


@dataclass(frozen=True, slots=True)
class ItemError:
    index: int
    event_id: str | None
    error: str


@dataclass(slots=True)
class BulkResult:
    total: int = 0
    imported: int = 0
    deduplicated: int = 0
    failed: int = 0
    errors: list[ItemError] = field(default_factory=list)
    results: list[ObserveResult | None] = field(default_factory=list)


class Capture:
    """Observing events: ``observe`` one, ``observe_many`` a batch (each item on its own),
    and their forms for the event loop."""

    def __init__(
        self,
        store: Store,
        redactor: Redactor,
        *,
        on_stored: Callable[[int], None] = lambda count: None,
        on_turn_end: Callable[[str], None] = lambda session_id: None,
        on_compacted: Callable[[str, str], None] = lambda session_id, at: None,
    ) -> None:
        self.store = store
        self.redactor = redactor
        self._on_stored = on_stored
        self._on_turn_end = on_turn_end
        self._on_compacted = on_compacted

    def observe(self, envelope: Envelope | Mapping[str, Any]) -> ObserveResult:
        """Record one hook event: raw event, synthetic observation and lazy session, at once.

        Raises ``InvalidInput`` naming the bad field; nothing is written then.
        """
        event = prepare(as_envelope(envelope), redactor=self.redactor)
        result = _single(self.store.submit_events([event]).result())
        self._after(event, result)
        self._compacted(_compactions([(event, not result.deduplicated)]))
        return result

    async def observe_async(self, envelope: Envelope | Mapping[str, Any]) -> ObserveResult:
        """``observe`` for the event loop: a large event is prepared on a thread, so that
        redacting it holds up no other request."""
        envelope = as_envelope(envelope)
        data_text = jsontext.dumps(envelope.data)
        if len(data_text) <= INLINE_DATA_CHARS:
            event = prepare(envelope, redactor=self.redactor, data_text=data_text)
        else:
            event = await asyncio.to_thread(
                prepare, envelope, redactor=self.redactor, data_text=data_text
            )
        result = _single(await asyncio.wrap_future(self.store.submit_events([event])))
        self._after(event, result)
        if compacted := _compactions([(event, not result.deduplicated)]):
            await asyncio.to_thread(self._compacted, compacted)  # a store write: off the loop
        return result

    def _after(self, event: NewEvent, result: ObserveResult) -> None:
        self._on_stored(0 if result.deduplicated else 1)
        if event.hook_type in TURN_ENDS:
            self._on_turn_end(event.session_id)

    def _compacted(self, compacted: list[tuple[str, str]]) -> None:
        """Signal each session's compaction (at the time it happened). The event is
        stored whatever becomes of the signal: a failure is logged, and the session's next
        blocks give only what is new, as before a compaction."""
        for session_id, at in compacted:
            try:
                self._on_compacted(session_id, at)
            except Exception:
                log.warning(
                    "session %s: its compaction was not signalled", session_id, exc_info=True
                )

    def observe_many(self, envelopes: Iterable[Envelope | Mapping[str, Any]]) -> BulkResult:
        """Record many events. Each is validated and stored on its own, so one bad item
        fails alone; results keep the input order."""
        bulk = BulkResult()
        chunk: list[Any] = []
        for envelope in envelopes:
            chunk.append(envelope)
            if len(chunk) >= BULK_CHUNK:
                # Chunk by chunk rather than overlapping preparation with the writer:
                # both need the GIL, and measured, the overlap is slower.
                self._collect(bulk, *self._submit(bulk, chunk, len(bulk.results)))
                chunk = []
        if chunk:
            self._collect(bulk, *self._submit(bulk, chunk, len(bulk.results)))
        self._on_stored(bulk.imported)
        return bulk

    async def observe_many_async(self, envelopes: list[Any]) -> BulkResult:
        """``observe_many`` for the event loop: the batch is validated and prepared on a
        thread (up to 500 events: always long enough to hold up other requests)."""
        bulk = BulkResult()
        positions, future, events = await asyncio.to_thread(self._submit, bulk, envelopes, 0)
        outcomes = await asyncio.wrap_future(future) if future else []
        _record(bulk, positions, outcomes)
        if compacted := self._signals(events, outcomes):
            await asyncio.to_thread(self._compacted, compacted)
        self._on_stored(bulk.imported)
        return bulk

    def _submit(
        self, bulk: BulkResult, items: list[Any], base: int
    ) -> tuple[list[int], Any, list[NewEvent]]:
        """Validate and prepare ``items``; queue the valid ones. Invalid ones are recorded."""
        bulk.total += len(items)
        bulk.results.extend([None] * len(items))
        positions, events = [], []
        received_at = iso(utc_now())
        for offset, raw in enumerate(items):
            index = base + offset
            try:
                envelope = as_envelope(raw, where=f"observations[{index}]")
            except InvalidInput as exc:
                event_id = raw.get("eventId") if isinstance(raw, Mapping) else None
                bulk.failed += 1
                bulk.errors.append(
                    ItemError(index, event_id if isinstance(event_id, str) else None, exc.message)
                )
                continue
            positions.append(index)
            events.append(prepare(envelope, received_at, redactor=self.redactor))
        return positions, (self.store.submit_events(events) if events else None), events

    def _collect(
        self, bulk: BulkResult, positions: list[int], future: Any, events: list[NewEvent]
    ) -> None:
        outcomes = future.result() if future else []
        _record(bulk, positions, outcomes)
        self._compacted(self._signals(events, outcomes))

    def _signals(
        self, events: list[NewEvent], outcomes: list[AppendOutcome]
    ) -> list[tuple[str, str]]:
        """The turn ends a bulk path stored (``/observe/bulk``, the hook spool's drain,
        imports) signal their sessions as ``observe`` does; a repeat signalled when it
        first came. The compactions it stored, for the caller to signal (``_compacted``:
        a store write, which the event loop hands to a thread)."""
        stored = [
            (event, isinstance(outcome, AppendResult) and not outcome.deduplicated)
            for event, outcome in zip(events, outcomes, strict=True)
        ]
        for event, new in stored:
            if new and event.hook_type in TURN_ENDS:
                self._on_turn_end(event.session_id)
        return _compactions(stored)


def _compactions(stored: Iterable[tuple[NewEvent, bool]]) -> list[tuple[str, str]]:
    """The sessions and times of the compactions among the events, each with whether it
    was stored now (a repeat was signalled when it first came)."""
    return [
        (event.session_id, event.occurred_at)
        for event, new in stored
        if new and event.hook_type == COMPACTION
    ]


def as_envelope(value: Envelope | Mapping[str, Any], *, where: str = "") -> Envelope:
    if isinstance(value, Envelope):
        return value
    return validate(Envelope, value, where=where)


def _single(outcomes: list[AppendOutcome]) -> ObserveResult:
    outcome = outcomes[0]
    if isinstance(outcome, AppendFailure):
        raise StoreFailure(f"could not store the event: {outcome.error}")
    return ObserveResult.of(outcome)


def _record(bulk: BulkResult, positions: list[int], outcomes: list[AppendOutcome]) -> None:
    for index, outcome in zip(positions, outcomes, strict=True):
        if isinstance(outcome, AppendFailure):
            bulk.failed += 1
            bulk.errors.append(ItemError(index, outcome.client_event_id, outcome.error))
            continue
        bulk.results[index] = ObserveResult.of(outcome)
        if outcome.deduplicated:
            bulk.deduplicated += 1
        else:
            bulk.imported += 1
