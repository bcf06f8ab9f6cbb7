"""Answers of the memory routes: hits, memories whole, fragments written, edited or
deleted, upkeep done, and memory blocks."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from memvault.api.schemas.shape import Count, Score, Shape, sometimes


class _Identity(Shape):
    kind: str
    id: str
    title: str
    summary: str
    project: str | None
    sessionId: str | None
    updatedAt: str
    eventIds: list[str]
    path: Annotated[str, sometimes("In the vault, when it is a file")]


class HitView(_Identity):
    score: Score
    relevance: Score
    importance: Score
    recency: Score
    archived: Annotated[Literal[True], sometimes("Only said of an archived memory")]


class MemoryView(_Identity):
    importance: float
    accessCount: Count
    lastAccessed: str | None
    archived: bool
    tags: Annotated[list[str], sometimes()]


class EntryView(MemoryView):
    body: str
    properties: dict[str, Any]


class SearchResults(Shape):
    query: str
    results: list[HitView]


class CompactResults(Shape):
    mode: Literal["compact"]
    results: list[HitView]


class ExpandedResults(Shape):
    mode: Literal["expanded"]
    results: list[EntryView]
    truncated: bool


class Remembered(Shape):
    success: Literal[True]
    action: Literal["created", "merged"]
    path: Annotated[str, Field(description="The fragment's file, in the vault")]
    similarity: float | None
    memory: Annotated[MemoryView, sometimes("The fragment, once the index holds it")]
    similarTo: Annotated[str | None, sometimes("When merged: the fragment's id")]


class Forgotten(Shape):
    success: Literal[True]
    forgotten: str
    path: str | None


class FragmentDeleted(Shape):
    success: Literal[True]
    deleted: bool = Field(description="False for a dry run: the id was checked, nothing deleted")
    id: str
    path: str = Field(description="Relative to the vault")
    summary: str | None = sometimes("The fragment's summary (not for a dry run)")


class GoneFragment(Shape):
    id: str
    project: str
    summary: str
    folder: str = Field(description="The project's folder the files were looked for in")
    files: list[str] = Field(description="The files it cites, none of them there any more")
    fix: str = Field(description="The command that deletes it")


class StaleFragments(Shape):
    fragments: list[GoneFragment]


class Maintained(Shape):
    success: Literal[True]
    dryRun: bool
    archived: list[str] = Field(description="Fragments archived (or that would be)")
    summarized: list[str] = Field(description="Projects whose L2 summary was written")


class Reindexed(Shape):
    success: Literal[True]
    documents: Count = Field(description="Documents indexed or updated")


class JobsRun(Shape):
    success: Literal[True]
    jobs_run: Count = Field(alias="jobsRun", description="Pipeline jobs run to the end")


class Memories(Shape):
    memories: list[MemoryView]
    offset: Count
    limit: int


class OneMemory(Shape):
    memory: EntryView


class ProjectMemory(Shape):
    project: str
    summary: str | None
    total: Count
    fragments: list[MemoryView]


class Block(Shape):
    kind: str
    id: str
    text: str


class Context(Shape):
    context: str
    blocks: list[Block]
    tokens: Count
    budget: int
    truncated: bool


class Enriched(Shape):
    context: str
    truncated: bool
    tokens: Count
    found: Annotated[Count, Field(description="Blocks about the files; 0: only the report line")]
