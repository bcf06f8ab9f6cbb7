"""Ingest: turn an envelope into an event ready for the store.

Validation, then redaction, then the synthetic observation. Nothing here waits on I/O;
the store appends the result in one transaction.
"""

from __future__ import annotations

from memvault.domain import NewEvent, canonical_time, iso, utc_now
from memvault.ingest.envelope import Envelope
from memvault.ingest.redact import redact_json, redact_path
from memvault.ingest.synthetic import compress

__all__ = ["Envelope", "prepare"]


def prepare(envelope: Envelope, received_at: str | None = None) -> NewEvent:
    """Redact and compress one envelope. ``received_at`` may be shared by a whole batch."""
    received_at = received_at or iso(utc_now())
    occurred_at = canonical_time(envelope.timestamp) or received_at
    data, payload = redact_json(envelope.data)
    return NewEvent(
        session_id=envelope.session_id,
        client_event_id=envelope.event_id,
        hook_type=envelope.hook_type,
        project=envelope.project,
        cwd=redact_path(envelope.cwd),
        agent_id=envelope.agent_id,
        client_timestamp=envelope.timestamp,
        occurred_at=occurred_at,
        received_at=received_at,
        payload=payload,
        observation=compress(envelope.hook_type, data),
    )
