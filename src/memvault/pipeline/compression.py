"""The compression job: a session's synthetic tool observations upgraded by the LLM.

Runs only while auto-compress is on and an LLM is configured. A batch of tool outcomes goes
per call (sized to the input limit), each batch written with the watermark past it; the
runs held back for these upgrades (``window``) are then hurried along.
"""

from __future__ import annotations

import logging

from memvault.config import Settings
from memvault.domain import Event, Observation, Watermark
from memvault.llm import LLM, LLMError
from memvault.llm.budget import estimate_tokens
from memvault.pipeline.jobs import COMPRESS, EXTRACT, GRAPH, SUMMARIZE, queue
from memvault.pipeline.llm_tasks import (
    COMPRESS_SYSTEM,
    compress_block,
    derived_by,
    llm_observations,
)
from memvault.pipeline.window import PROMPT_MARGIN
from memvault.store import Store

log = logging.getLogger(__name__)

COMPRESSED_HOOKS = frozenset({"post_tool_use", "post_tool_failure"})
COMPRESS_BATCH = 20  # tool outcomes per LLM call, at most
COMPRESS_EVENTS = 500  # events looked at per compression run


def compress_session(
    store: Store, settings: Settings, llm: LLM | None, session_id: str, *, give_up: bool = False
) -> int:
    """Upgrade the session's synthetic tool observations with the LLM, a batch per
    call (sized to the input limit), each batch written with the watermark past it;
    how many were upgraded. Events already summarized are not sent. On the last attempt
    after failures (``give_up``), the watermark moves on without upgrades, so nothing
    waits forever."""
    session = store.get_session(session_id)
    if session is None or llm is None:
        return 0
    summarized = session.summarized
    if (summarized.seq or 0) > (session.compressed.seq or 0):
        # What is summarized is never sent: the watermark catches up at once.
        store.upgrade_observations(session_id, [], derived_by="", through=summarized)
    start = max(session.compressed.seq or 0, summarized.seq or 0)
    events = store.events_after(session_id, start, limit=COMPRESS_EVENTS)
    if not events:
        return 0
    observations = {o.event_seq: o for o in store.observations_of([e.seq for e in events])}
    author = derived_by(llm)
    room = settings.llm_max_input_tokens - estimate_tokens(COMPRESS_SYSTEM) - PROMPT_MARGIN
    upgraded = 0
    batch: list[tuple[Event, Observation]] = []
    cost = 0
    for at, event in enumerate(events):
        observation = observations.get(event.seq)
        if (
            observation is not None
            and event.hook_type in COMPRESSED_HOOKS
            and observation.derived_by == "synthetic"
        ):
            batch.append((event, observation))
            cost += estimate_tokens(compress_block(len(batch), event, observation))
        following = events[at + 1] if at + 1 < len(events) else None
        if following is not None and len(batch) < COMPRESS_BATCH:
            upcoming = observations.get(following.seq)
            # The batch goes before the next item would take it past the input limit.
            if (
                upcoming is None
                or cost + estimate_tokens(compress_block(len(batch) + 1, following, upcoming))
                <= room
            ):
                continue
        try:
            upgrades = llm_observations(llm, batch) if batch else {}
        except LLMError:
            if not give_up:
                raise
            log.warning("session %s: observations left as they are", session_id)
            upgrades = {}
        through = Watermark(event.received_at, event.seq)
        if store.upgrade_observations(
            session_id, sorted(upgrades.items()), derived_by=author, through=through
        ):
            upgraded += len(upgrades)
        batch, cost = [], 0
    if len(events) == COMPRESS_EVENTS:
        queue(store, COMPRESS, session_id)
    # Runs held back for these upgrades need not wait out the grace period.
    for kind in (SUMMARIZE, EXTRACT, GRAPH):
        store.hurry_job(kind, session_id)
    return upgraded
