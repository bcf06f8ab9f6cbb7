"""Ingest: turn an envelope into an event ready for the store.

Validation, then redaction, then the synthetic observation. Nothing here waits on I/O;
the store appends the result in one transaction. ``capture`` observes one event or many
through this path, and ``spool`` drains the events hooks kept while the server was away.
"""

from __future__ import annotations

from memvault.derive.synthetic import compress
from memvault.domain import NewEvent, canonical_time, iso, utc_now
from memvault.ingest.envelope import Envelope
from memvault.ingest.redact import Redactor

__all__ = ["INLINE_DATA_CHARS", "Envelope", "Redactor", "prepare"]

# An event whose data is longer than this (as JSON text) is prepared off the event loop: its
# redaction takes long enough to hold up other requests. Below it, hook events (1-2 KB) are
# prepared in place: a hop to a thread costs more than preparing them (docs/benchmarks.md).
INLINE_DATA_CHARS = 16 * 1024

_PATTERNS_ONLY = Redactor()


def prepare(
    envelope: Envelope,
    received_at: str | None = None,
    *,
    redactor: Redactor = _PATTERNS_ONLY,
    data_text: str | None = None,
) -> NewEvent:
    """Redact and compress one envelope. ``received_at`` may be shared by a whole batch;
    ``data_text``, when given, is ``envelope.data`` as JSON text already made."""
    received_at = received_at or iso(utc_now())
    # An event happened no later than it arrived: a host whose clock runs ahead does not
    # date its memory in the future (fresh in every ranking, its session never idle, for
    # as long). The host's own time stays in ``client_timestamp``.
    said = canonical_time(envelope.timestamp)
    occurred_at = min(said, received_at) if said else received_at
    data, payload = redactor.redact_json(envelope.data, data_text)
    return NewEvent(
        session_id=envelope.session_id,
        client_event_id=envelope.event_id,
        hook_type=envelope.hook_type,
        project=redactor.redact_path(envelope.project),
        cwd=redactor.redact_path(envelope.cwd),
        agent_id=envelope.agent_id,
        client_timestamp=envelope.timestamp,
        occurred_at=occurred_at,
        received_at=received_at,
        payload=payload,
        observation=compress(envelope.hook_type, data),
    )
