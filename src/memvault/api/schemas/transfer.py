"""Answers of the import and export routes: a transcript import and an archive's report."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from memvault.api.schemas.shape import Count, Shape, sometimes


class TranscriptProblem(Shape):
    file: str
    line: int
    error: str


class TranscriptReport(Shape):
    files: Count
    lines: Count
    eventsSent: Count
    newEvents: Count
    duplicates: Count
    skipped: dict[str, Count]
    errorCount: Count
    errors: list[TranscriptProblem]
    sessionIds: list[str]


class TranscriptImport(Shape):
    success: Literal[True]
    imported: Annotated[Count, Field(description="Files found to import")]
    sessionIds: list[str]
    observations: Count
    discovered: Count
    truncated: bool
    traversalCapped: bool
    maxFiles: int
    maxFilesUpperBound: int
    path: str
    status: Literal["running", "done", "failed"]
    startedAt: str
    finishedAt: str | None
    error: str | None
    report: TranscriptReport


class NoTranscriptImport(Shape):
    success: Literal[True]
    status: Literal["idle"]


class OutcomeCounts(Shape):
    new: Count
    existing: Count
    merged: Count
    replaced: Count
    skipped: Count
    refused: Count


class ArchiveProblem(Shape):
    kind: str
    error: str
    line: Annotated[int, sometimes("Of a memvault archive")]
    item: Annotated[str, sometimes("In an agentmemory export: `memories[3]`")]


class ArchiveReport(Shape):
    source: Literal["memvault", "agentmemory"]
    version: str
    strategy: str
    complete: bool
    counts: dict[str, OutcomeCounts]
    skipped: dict[str, Count]
    summariesQueued: Count
    problemCount: Count
    problems: list[ArchiveProblem]


class Imported(Shape):
    success: Literal[True]
    strategy: str
    sessions: Count
    observations: Count
    memories: Count
    summaries: Count
    skipped: Count
    report: ArchiveReport
