"""The health page: store and engine, queue and index backlog, spool, memory used, the
embedder and the LLM, and the ingest rate over the last hour as a small chart."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, Request, Response

from memvault import present
from memvault.viewer.render import memory_of, page

router = APIRouter(include_in_schema=False)
CHART_WIDTH, CHART_HEIGHT = 600, 80


@dataclass(frozen=True, slots=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    minute: int  # minutes ago
    events: int


def bars(counts: list[int]) -> list[Bar]:
    """The chart's bars, one a minute, scaled to the busiest minute."""
    top = max(counts, default=0) or 1
    width = CHART_WIDTH / max(len(counts), 1)
    drawn = []
    for index, count in enumerate(counts):
        height = round(count / top * (CHART_HEIGHT - 2), 1)
        drawn.append(
            Bar(
                round(index * width, 1),
                round(CHART_HEIGHT - height, 1),
                round(width - 1, 1),
                height,
                len(counts) - 1 - index,
                count,
            )
        )
    return drawn


@router.get("/health")
def health(request: Request) -> Response:
    memory = memory_of(request)
    report = present.health(memory.health.report())
    counts = memory.reads.ingest_rate.last_hour()
    return page(
        request,
        "health.html",
        title="Health",
        live="events",
        h=report,
        bars=bars(counts),
        per_hour=sum(counts),
        busiest=max(counts, default=0),
        chart=(CHART_WIDTH, CHART_HEIGHT),
    )
