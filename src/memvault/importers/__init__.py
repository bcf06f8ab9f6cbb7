"""Importers: past conversations from a host's local transcripts, through the same observe
path as live hooks.

Each source module reads one host's files and yields the envelopes its hooks would have
sent, with event ids derived from the transcript, so importing again stores nothing new.
``run_import`` sends them to ``Memory.observe_many`` in batches and reports what happened.
"""

from __future__ import annotations

from memvault.importers import claude_code, cursor
from memvault.importers.driver import (
    BATCH_SIZE,
    Discovery,
    ImportReport,
    Problem,
    Progress,
    Step,
    Transcript,
    run_import,
)

__all__ = [
    "BATCH_SIZE",
    "Discovery",
    "ImportReport",
    "Problem",
    "Progress",
    "Step",
    "Transcript",
    "claude_code",
    "cursor",
    "run_import",
]
