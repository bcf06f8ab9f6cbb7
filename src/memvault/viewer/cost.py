"""The cost page: tokens memory blocks gave agents over the last 30 days, a bar a day
(inline SVG, no script), per project and per session, and the cap each block is held to."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from memvault.viewer.health import CHART_HEIGHT, CHART_WIDTH, bars
from memvault.viewer.render import memory_of, page

router = APIRouter(include_in_schema=False)


@router.get("/cost")
def cost(request: Request) -> Response:
    memory = memory_of(request)
    report = memory.cost.report()
    days = report.per_day
    drawn = [(bar, day) for bar, day in zip(bars([day.tokens for day in days]), days, strict=True)]
    return page(
        request,
        "cost.html",
        title="Cost",
        live="events",
        report=report,
        drawn=drawn,
        chart=(CHART_WIDTH, CHART_HEIGHT),
        busiest=max((day.tokens for day in days), default=0),
    )
