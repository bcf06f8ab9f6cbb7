"""Recorded conversations as observe envelopes, read by memvault's own transcript importers
(the envelopes the host adapters send: prompts, assistant text and tool outcomes kept;
thinking, progress lines, local slash-command chatter and interruption markers skipped)."""

from __future__ import annotations

from pathlib import Path

from memvault.importers import claude_code as claude_code_importer
from memvault.importers import cursor_transcripts as cursor_importer


def claude_code(path: Path) -> list[dict]:
    """A Claude Code ``~/.claude/projects/<slug>/<session>.jsonl`` as envelopes."""
    return [e for step in claude_code_importer.read(path) for e in step.envelopes]


def cursor(path: Path, *, cwd: str) -> list[dict]:
    """A Cursor ``agent-transcripts/<id>/<id>.jsonl`` as envelopes, run in ``cwd``."""
    return [e for step in cursor_importer.read_jsonl(path, folder=cwd) for e in step.envelopes]
