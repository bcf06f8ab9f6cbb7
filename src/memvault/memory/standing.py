"""A project's standing memory: what a block without a request tells (a session start's),
its most important live fragments and its latest sessions; and whether a session has it
yet (``owed``). A host that takes no block at a session's start (Gemini), and a session
whose conversation was compacted since its start's block (the block went with it, and
Cursor runs no start again), get it with the next prompt's block."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

from memvault.domain import Document, utc_now
from memvault.memory.staleness import retired_mark
from memvault.memory.telling import drawn_from, in_passing, tellable_summary
from memvault.search.engine import Hit
from memvault.search.ranking import Weights, recency
from memvault.store import Store

# A session start's block, the project's standing memory, short: its most important live
# fragments and its latest sessions (on the real coding sessions it was 12 items and 1,200
# tokens a start, 4 % of them from a session the first request was about).
STANDING_FRAGMENTS = 5
STANDING_SESSIONS = 3
STANDING_READ = 200  # a project's newest live memories of a kind the standing block ranks
STANDING_SCANNED = 5000  # at most read for them
# Recorded among what a session was given (``Store.record_injected``) when a block gave it
# the standing memory, however little of it was new: a compaction forgets it with the rest.
GIVEN = ("standing", "project")


def owed(given: Mapping[tuple[str, str], bool]) -> bool:
    """Whether a session given ``given`` (``Store.injected``) has had no standing memory
    since it started or was last compacted."""
    return GIVEN not in given


def standing_memory(
    store: Store,
    weights: Weights,
    project: str | None,
    *,
    own_row: str | None = None,
    session_id: str | None = None,
) -> tuple[list[Hit], list[Hit]]:
    """The project's standing fragments and sessions: what an agent said once in passing is
    its session's, told with that session when a request is about it; never the asking
    session (``session_id``, its board row ``own_row``)."""
    fragments = standing(
        store, weights, project, "fragment", STANDING_FRAGMENTS, keep=lambda d: not in_passing(d)
    )
    told = functools.partial(tellable_summary, own_row=own_row, session_id=session_id)
    return fragments, standing(store, weights, project, "summary", STANDING_SESSIONS, keep=told)


def standing(
    store: Store,
    weights: Weights,
    project: str | None,
    kind: str,
    limit: int,
    keep: Callable[[Document], bool] = bool,
) -> list[Hit]:
    """Without a query: a project's ``limit`` live memories (not superseded, resolved
    or done; of those ``keep`` keeps) by importance and recency alone, of its newest
    ``STANDING_READ`` such memories (read past those ``keep`` leaves out, at most
    ``STANDING_SCANNED`` in all: a project's newest fragments may all be an agent's
    passing remarks)."""
    documents: list[Document] = []
    offset = 0
    while len(documents) < STANDING_READ and offset < STANDING_SCANNED:
        batch = store.list_documents(kind, project=project, limit=STANDING_READ, offset=offset)
        offset += len(batch)
        documents += [
            document
            for document in batch
            # Idle board rows are sessions nobody described yet: nothing to tell.
            if document.meta.get("status") != "idle"
            and retired_mark(document.summary) is None
            and keep(document)
        ]
        if len(batch) < STANDING_READ:
            break
    documents = documents[:STANDING_READ]
    now = utc_now()
    hits = []
    for document in documents:
        fresh = recency(document.updated_at, now, weights.decay)
        score = weights.score(0.0, document.importance, fresh)
        hits.append(Hit(document, score, 0.0, document.importance, fresh))
    hits.sort(key=lambda hit: hit.score, reverse=True)
    return _said_order(store, hits, limit)[:limit]


def _said_order(store: Store, hits: list[Hit], limit: int) -> list[Hit]:
    """``hits`` (best first) with the tie the cut at ``limit`` falls in (memories as
    important as each other, of one day) put in the order they were said, newest
    first: by the last event of the sessions each came from (``drawn_from``). The index's
    order is when each was derived, and a replayed or imported history is derived in any
    order. Memories from no session keep their order, after the day's said ones."""
    if len(hits) <= limit or hits[limit - 1].score != hits[limit].score:
        return hits
    tied = hits[limit - 1].score
    start = next(i for i, hit in enumerate(hits) if hit.score == tied)
    end = next((i for i in range(start, len(hits)) if hits[i].score != tied), len(hits))
    ended: dict[str, str | None] = {}

    def last_event(session_id: str) -> str | None:
        if session_id not in ended:
            session = store.get_session(session_id)
            ended[session_id] = session.last_event_at if session is not None else None
        return ended[session_id]

    def said(hit: Hit) -> tuple[bool, str]:
        own = hit.document.session_id
        lasts = [
            last for s in ({own} if own else drawn_from(hit.document)) if (last := last_event(s))
        ]
        return (True, max(lasts)) if lasts else (False, "")

    return [*hits[:start], *sorted(hits[start:end], key=said, reverse=True), *hits[end:]]
