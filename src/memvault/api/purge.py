"""``POST /agentmemory/purge``: a text replaced everywhere memvault keeps it (the use case
is ``memory.purge``); ``memvault purge`` uses it when a server runs."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from starlette.concurrency import run_in_threadpool

from memvault import present
from memvault.api.operation import Served, StrictBody, answer, examples, routes
from memvault.api.schemas.shape import Count, Shape

router = routes("/agentmemory", "memory")


class PurgeBody(StrictBody):
    model_config = StrictBody.model_config | examples(
        {"text": "hunter2-internal-token", "dryRun": True},
        {"text": "sk-live-[0-9a-f]{8,}", "regex": True},
    )

    text: Annotated[
        str,
        Field(
            min_length=1,
            max_length=1000,
            description="What to purge, matched without regard to case; at least 4 "
            "characters unless it is a pattern",
        ),
    ]
    regex: Annotated[bool, Field(description="`text` is a Python regular expression")] = False
    dry_run: Annotated[
        bool, Field(alias="dryRun", description="List the places and counts; change nothing")
    ] = False


class PurgePlace(Shape):
    where: str = Field(
        description="`table.column` in the store, or `vault:<path>` / `home:<path>` for a file"
    )
    rows: Count = Field(description="Rows (or files) holding the text")
    matches: Count


class Purged(Shape):
    success: bool
    dryRun: bool
    places: list[PurgePlace]
    rows: Count
    matches: Count
    purgedAt: str | None = Field(description="When the purge was recorded; null for a dry run")


@router.post(
    "/purge",
    summary="Replace a text with [REDACTED:purged] everywhere memvault keeps it",
    description=(
        "Events, observations, summaries, the board and its snapshots, fragments, search "
        "documents (their vectors are embedded again), graph names, queued jobs, the hook's "
        "spool and the server's logs. The event log is rewritten in place, once, and the "
        "purge is recorded (when and how many, never the text) in `/health`. `dryRun` "
        "lists the places and counts and changes nothing."
    ),
    **answer(
        "What was (or would be) replaced, and where",
        Purged,
        {400: {"description": "An empty, too short or too broad text, or a bad pattern"}},
    ),
)
async def purge(memory: Served, body: PurgeBody) -> dict[str, Any]:
    report = await run_in_threadpool(
        memory.purge.purge, body.text, regex=body.regex, dry_run=body.dry_run
    )
    return present.purged(report)
