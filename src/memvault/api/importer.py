"""``POST /agentmemory/replay/import-jsonl``: import Claude Code transcripts in the
background, as agentmemory's route does, and ``GET`` the same path to follow it.

One import runs at a time per server; it runs on its own thread at a lower priority, so
hooks keep being answered first, and sends its events through the same bulk observe path
as ``/observe/bulk``.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from fastapi import Request
from pydantic import Field
from starlette.concurrency import run_in_threadpool

from memvault.api import schemas
from memvault.api.operation import Body, answer, examples, memory_of, model_body, routes
from memvault.api.responses import JSONResponse
from memvault.background import lower_this_threads_priority
from memvault.domain import iso, utc_now
from memvault.errors import InvalidInput
from memvault.importers import Discovery, ImportReport, claude_code, run_import
from memvault.ingest.envelope import parse_json, refuse_nul, validate
from memvault.memory import Memory

log = logging.getLogger(__name__)
router = routes("/agentmemory", "import")

MAX_FILES_DEFAULT = 200
MAX_FILES_UPPER_BOUND = 1000


class ImportRequest(Body):
    model_config = examples({"path": "~/.claude/projects", "maxFiles": 200})

    path: Annotated[
        str | None,
        Field(min_length=1, max_length=4096, description="A .jsonl file or a folder in $HOME"),
    ] = None
    max_files: Annotated[
        int | None, Field(alias="maxFiles", ge=1, le=MAX_FILES_UPPER_BOUND, strict=True)
    ] = None


@dataclass(slots=True)
class ImportJob:
    root: Path
    found: Discovery
    max_files: int
    session_ids: list[str]
    started_at: str = field(default_factory=lambda: iso(utc_now()))
    finished_at: str | None = None
    failure: str | None = None
    report: ImportReport = field(default_factory=ImportReport)
    thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def run(self, memory: Memory) -> None:
        lower_this_threads_priority()
        try:
            transcripts = [claude_code.transcript(path) for path in self.found.files]
            run_import(memory, transcripts, report=self.report)
        except Exception as exc:  # the server goes on; the status says what happened
            log.exception("transcript import from %s failed", self.root)
            self.failure = f"{type(exc).__name__}: {exc}"
        finally:
            self.finished_at = iso(utc_now())

    def to_dict(self) -> dict[str, Any]:
        return {
            "imported": len(self.found.files),
            "sessionIds": self.session_ids,
            "observations": self.report.new,
            "discovered": self.found.discovered,
            "truncated": self.found.truncated,
            "traversalCapped": self.found.traversal_capped,
            "maxFiles": self.max_files,
            "maxFilesUpperBound": MAX_FILES_UPPER_BOUND,
            "path": str(self.root),
            "status": "running" if self.running else "failed" if self.failure else "done",
            "startedAt": self.started_at,
            "finishedAt": self.finished_at,
            "error": self.failure,
            "report": self.report.to_dict(),
        }


@router.post(
    "/replay/import-jsonl",
    status_code=202,
    summary="Import Claude Code transcripts (in the background)",
    description=(
        "Finds up to `maxFiles` (default 200, at most 1000) `*.jsonl` files under `path` "
        "(default `~/.claude/projects`; it must be inside the server user's home folder) and "
        "imports them through the same observe path as live hooks, with stable event ids: "
        "importing again stores nothing new. Answers 202 at once; `GET` this path to follow "
        "it. 409 while another import runs."
    ),
    openapi_extra=model_body(ImportRequest, required=False),
    responses={
        202: {"description": "Started", "model": schemas.TranscriptImport},
        400: {"description": "Bad `path` or `maxFiles`; nothing was started"},
        409: {"description": "An import is already running"},
    },
)
async def start_import(request: Request) -> JSONResponse:
    raw = await request.body()
    decoded = parse_json(raw) if raw.strip() else {}
    refuse_nul(decoded)
    body = validate(ImportRequest, decoded)
    if (busy := _busy(request)) is not None:
        return busy
    # Looking through the folder touches the disk: off the event loop.
    job = await run_in_threadpool(_prepare, body)
    # From here to the thread's start nothing awaits, so no other request can start one.
    if (busy := _busy(request)) is not None:
        return busy
    job.thread = threading.Thread(
        target=job.run, args=(memory_of(request),), name="memvault-import", daemon=True
    )
    request.app.state.transcript_import = job
    job.thread.start()
    return JSONResponse({"success": True, **job.to_dict()}, status_code=202)


@router.get(
    "/replay/import-jsonl",
    summary="The current or last transcript import",
    **answer(
        "The import, or `idle` when none was started",
        schemas.TranscriptImport | schemas.NoTranscriptImport,
    ),
)
async def import_status(request: Request) -> dict[str, Any]:
    job: ImportJob | None = getattr(request.app.state, "transcript_import", None)
    if job is None:
        return {"success": True, "status": "idle"}
    return {"success": True, **job.to_dict()}


def _busy(request: Request) -> JSONResponse | None:
    """The 409 answer while an import runs, else None."""
    current: ImportJob | None = getattr(request.app.state, "transcript_import", None)
    if current is None or not current.running:
        return None
    message = (
        f"an import is already running (from {current.root}, started {current.started_at}, "
        f"{current.report.files} of {len(current.found.files)} files done); try again when "
        "it has finished"
    )
    return JSONResponse({"success": False, "error": message}, status_code=409)


def _prepare(body: ImportRequest) -> ImportJob:
    root = _checked_root(body.path)
    max_files = body.max_files or MAX_FILES_DEFAULT
    found = claude_code.discover(root, limit=max_files, visit_limit=max(max_files * 50, 50_000))
    return ImportJob(root, found, max_files, _session_ids(found.files))


def _checked_root(path: str | None) -> Path:
    """The folder or file to import from: inside the home folder, and there."""
    home = Path.home().resolve()
    given = Path(path.strip()).expanduser() if path else claude_code.default_root()
    if not given.is_absolute():
        raise InvalidInput(f"path must be absolute (or start with ~): {path}", fields=["path"])
    root = given.resolve()
    if not root.is_relative_to(home):
        raise InvalidInput(
            f"path {given} is outside your home folder ({home}); only transcripts under it "
            "can be imported",
            fields=["path"],
        )
    if not root.exists():
        raise InvalidInput(f"path {given} does not exist", fields=["path"])
    if root.is_file() and root.suffix != ".jsonl":
        raise InvalidInput(f"path {given} is not a .jsonl file or a folder", fields=["path"])
    return root


def _session_ids(files: list[Path]) -> list[str]:
    """The sessions the files hold (a subagent's file is its session's)."""
    return sorted({claude_code.session_in(path) for path in files})
