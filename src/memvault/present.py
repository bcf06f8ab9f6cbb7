"""The shapes memvault shows its objects in, shared by every entry point: the REST API's
JSON (in agentmemory's camelCase where it has one), the MCP tools' structured answers, the
CLI's ``--json`` and the viewer's pages."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memvault.domain import BoardRow, Document, Observation, Session, Watermark
from memvault.graph.model import GraphSlice, GraphStats
from memvault.memory import BulkResult, EmbedderState, Health, LLMState, Memory, ObserveResult
from memvault.memory.context import StartedSession
from memvault.memory.fragments import Deleted, Maintenance
from memvault.memory.purge import PurgeReport
from memvault.memory.reading import BoardEntry
from memvault.memory.recall import Entry, ProjectMemory
from memvault.memory.staleness import GoneFiles
from memvault.search.context import Packed
from memvault.search.engine import Hit
from memvault.search.indexer import Backlog
from memvault.store.contract import PurgeRecord
from memvault.vault.board import format_references
from memvault.vault.remember import Remembered

if TYPE_CHECKING:  # only named: the archive package is loaded by the routes that import
    from memvault.archive import ImportReport


def observe_result(result: ObserveResult) -> dict[str, Any]:
    if result.deduplicated:
        return {
            "deduplicated": True,
            "sessionId": result.session_id,
            "eventId": result.event_id,
            "observationId": result.observation_id,
        }
    return {"observationId": result.observation_id, "eventSeq": result.event_seq}


def bulk_result(bulk: BulkResult) -> dict[str, Any]:
    return {
        "success": True,
        "total": bulk.total,
        "imported": bulk.imported,
        "deduplicated": bulk.deduplicated,
        "failed": bulk.failed,
        "errors": [
            {"index": e.index, "eventId": e.event_id, "error": e.error} for e in bulk.errors
        ],
        "results": [observe_result(r) if r else None for r in bulk.results],
    }


def _cursor(mark: Watermark) -> dict[str, Any] | None:
    return None if mark.at is None and mark.seq is None else {"at": mark.at, "seq": mark.seq}


def session(s: Session) -> dict[str, Any]:
    return {
        "id": s.id,
        "project": s.project,
        "cwd": s.cwd,
        "agentId": s.agent_id,
        "title": s.title,
        "memorySessionId": s.board_session_id,
        # Conversations are open-ended: memvault never closes a session.
        "status": "active",
        "startedAt": s.first_event_at or s.created_at,
        "createdAt": s.created_at,
        "lastEventAt": s.last_event_at,
        "eventCount": s.event_count,
        "observationCount": s.observation_count,
        "summaryRevision": s.summary_revision,
        "summarizedObservationCount": s.summarized_observation_count,
        "watermarks": {
            "summarized": _cursor(s.summarized),
            "extracted": _cursor(s.extracted),
            "reflected": _cursor(s.reflected),
            "graphExtracted": _cursor(s.graph_extracted),
        },
        "lastSweepAttemptAt": s.last_sweep_attempt_at,
    }


def session_started(started: StartedSession) -> dict[str, Any]:
    """The session, its board row's id (when the row was written) and the memory block,
    after the row's report line."""
    report = started.board
    return {
        "session": session(started.session),
        "memorySessionId": report.session_id if report.ok else None,
        "context": "\n\n".join(
            part for part in (report.message if report.ok else "", started.context) if part
        ),
    }


def observation(o: Observation) -> dict[str, Any]:
    return {
        "id": o.id,
        "sessionId": o.session_id,
        "eventId": o.client_event_id,
        "eventSeq": o.event_seq,
        "timestamp": o.occurred_at,
        "hookType": o.hook_type,
        "type": o.type,
        "title": o.title,
        "narrative": o.narrative,
        "facts": o.facts,
        "files": o.files,
        "concepts": o.concepts,
        "importance": o.importance,
        "derivedBy": o.derived_by,
        "updatedAt": o.updated_at,
    }


def health(h: Health) -> dict[str, Any]:
    s = h.store
    return {
        "status": h.status,
        "reasons": list(h.reasons),
        "service": "memvault",
        "version": h.version,
        "uptimeSeconds": h.uptime_seconds,
        "store": {
            "engine": s.engine,
            "location": s.location,
            "sizeBytes": s.size_bytes,
            "schemaVersion": s.schema_version,
            "events": s.events,
            "observations": s.observations,
            "sessions": s.sessions,
            "pool": h.pool,
        },
        "queue": {
            "pendingWrites": h.pending_writes,
            "jobsPending": s.jobs_pending,
            "jobsRunning": s.jobs_running,
            "jobsFailed": s.jobs_failed,
            "spooledEvents": h.spooled,
            "spooledSetAside": h.spool_set_aside,
            "spoolSetAsideFolder": h.spool_set_aside_folder,
        },
        "process": {"pid": h.pid, "rssBytes": h.rss_bytes},
        "vault": {
            "path": h.vault,
            "fragmentsFolder": h.fragments_folder,
            "boardRows": h.board_rows,
            "fragments": h.fragments,
            "archivedFragments": h.archived_fragments,
            "syncConflicts": [
                {"path": c.path, "copyOf": c.of, "whatToDo": c.advice} for c in h.conflict_copies
            ],
        },
        "embedder": _embedder(h.embedder),
        "llm": _llm(h.llm),
        "index": _backlog(h.backlog),
        "replication": {
            "role": "vault owner" if h.vault_owner else "standby",
            "vaultOwner": h.vault_owner,
            "since": h.vault_owner_since,
            "vaultWritesQueued": h.vault_writes_queued,
        },
        "privacy": {
            "privateProjects": list(h.private_projects),
            "purges": h.purges,
            "lastPurge": _purge_record(h.last_purge),
        },
        "injected": h.injected.to_dict() if h.injected is not None else None,
    }


def _embedder(state: EmbedderState | None) -> dict[str, Any] | None:
    if state is None:
        return None
    return {
        "provider": state.provider,
        "model": state.model,
        "dimension": state.dimension,
        "loaded": state.loaded,
        "reason": state.reason,
    }


def _llm(state: LLMState | None) -> dict[str, Any] | None:
    if state is None:
        return None
    return {"provider": state.provider, "model": state.model, "reason": state.reason}


def _backlog(backlog: Backlog | None) -> dict[str, Any] | None:
    if backlog is None:
        return None
    return {
        "lastEventSeq": backlog.last_event_seq,
        "indexedThroughSeq": backlog.indexed_through,
        "eventsNotIndexed": backlog.events_not_indexed,
        "changesNotIndexed": backlog.changes_not_indexed,
        "documentsNotEmbedded": backlog.documents_not_embedded,
        "caughtUp": backlog.caught_up,
        "indexer": backlog.indexes_here,
    }


def board_row(row: BoardRow) -> dict[str, Any]:
    return {
        "sessionId": row.session_id,
        "agentName": row.agent_name,
        "topic": row.topic,
        "summary": row.summary,
        "keywords": row.keywords,
        "status": row.status,
        "referencedBy": format_references(row.referenced_by),
        "startedAt": row.started_at,
        "updatedAt": row.updated_at,
    }


def board_entry(entry: BoardEntry) -> dict[str, Any]:
    """A board row, its snapshot, and what memory gave the session's agent."""
    return {
        "session": board_row(entry.row),
        "snapshot": entry.snapshot_text,
        "injections": entry.injections,
    }


def identity(memory: Memory, document: Document) -> dict[str, Any]:
    """What every view of a memory says: what it is, where it is, where it came from."""
    return {
        "kind": document.kind,
        "id": memory.recall.public_id(document),
        "title": document.title,
        "summary": document.summary,
        "project": document.project,
        "sessionId": document.session_id,
        "updatedAt": document.updated_at,
        "eventIds": document.event_ids,
        **({"path": document.path} if document.path else {}),  # when it is a file
    }


def hit_view(memory: Memory, hit: Hit) -> dict[str, Any]:
    view = identity(memory, hit.document)
    view.update(
        score=round(hit.score, 6),
        relevance=round(hit.relevance, 6),
        importance=round(hit.importance, 6),
        recency=round(hit.recency, 6),
    )
    if hit.document.archived:
        view["archived"] = True
    return view


def document_view(memory: Memory, document: Document) -> dict[str, Any]:
    view = identity(memory, document)
    view.update(
        importance=document.importance,
        accessCount=document.access_count,
        lastAccessed=document.last_accessed,
        archived=document.archived,
    )
    tags = document.meta.get("tags")
    if tags is not None:
        view["tags"] = tags
    return view


def entry_view(memory: Memory, entry: Entry) -> dict[str, Any]:
    return {
        **document_view(memory, entry.document),
        "body": entry.body,
        "properties": entry.properties,
    }


def graph_slice(found: GraphSlice, *, limit: int, offset: int) -> dict[str, Any]:
    return {
        "success": True,
        "nodes": [n.to_dict() for n in found.nodes],
        "edges": [e.to_dict() for e in found.edges],
        "depth": found.depth,
        "truncated": found.truncated,
        "limit": limit,
        "offset": offset,
    }


def graph_stats(counted: GraphStats) -> dict[str, Any]:
    return {"success": True, **counted.to_dict()}


def graph_cleared(cleared: GraphStats) -> dict[str, Any]:
    return {"success": True, "cleared": cleared.to_dict()}


def fragment_deleted(deleted: Deleted) -> dict[str, Any]:
    return {
        "success": True,
        "deleted": True,
        "id": deleted.id,
        "path": deleted.path,
        "summary": deleted.summary,
    }


def maintained(report: Maintenance, *, dry_run: bool) -> dict[str, Any]:
    return {
        "success": True,
        "dryRun": dry_run,
        "archived": report.archived,
        "summarized": report.summarized,
    }


def hits(memory: Memory, found: list[Hit]) -> dict[str, Any]:
    """Search results, best first."""
    return {"results": [hit_view(memory, h) for h in found]}


def memories_page(
    memory: Memory, found: list[Document], *, offset: int, limit: int
) -> dict[str, Any]:
    return {
        "memories": [document_view(memory, d) for d in found],
        "offset": offset,
        "limit": limit,
    }


def remembered(memory: Memory, result: Remembered) -> dict[str, Any]:
    """A fragment written (or merged into a near-duplicate), and the fragment as the index
    holds it."""
    document = memory.recall.fragment_document(result.path)
    answer = {"success": True, **result.to_dict(memory.settings.vault_path)}
    if document is not None:
        answer["memory"] = document_view(memory, document)
    if result.action == "merged":
        answer["similarTo"] = answer["memory"]["id"] if document else None
    return answer


def gone_files(gone: GoneFiles) -> dict[str, Any]:
    """A fragment whose cited files are all gone, and the command that deletes it."""
    return {
        "id": gone.id,
        "project": gone.project,
        "summary": gone.summary,
        "folder": gone.folder,
        "files": list(gone.files),
        "fix": f'memvault fragments delete "{gone.id}"',
    }


def project_memory(memory: Memory, found: ProjectMemory) -> dict[str, Any]:
    """A project's memory (L2): its summary and its fragments."""
    return {
        "project": found.project,
        "summary": found.summary,
        "total": found.total,
        "fragments": [document_view(memory, d) for d in found.fragments],
    }


def context_block(packed: Packed) -> dict[str, Any]:
    """A memory block and what it holds."""
    return {
        "context": packed.text,
        "blocks": packed.blocks,
        "tokens": packed.tokens,
        "budget": packed.budget,
        "truncated": packed.truncated,
    }


# The blocks of an enrichment that are memory about the files (not the report line).
ENRICH_FOUND = frozenset({"fragment", "observation"})


def enriched(packed: Packed) -> dict[str, Any]:
    """A block about files, and how much of it is memory about them."""
    return {
        "context": packed.text,
        "truncated": packed.truncated,
        "tokens": packed.tokens,
        # What the block holds about the files; 0 when it is only the report line.
        "found": sum(b["kind"] in ENRICH_FOUND for b in packed.blocks),
    }


def imported(report: ImportReport) -> dict[str, Any]:
    """agentmemory's answer (what was written, what was not) and memvault's report."""

    def written(kind: str) -> int:
        counts = report.counts.get(kind)
        return counts.new + counts.merged + counts.replaced if counts else 0

    return {
        "success": True,
        "strategy": report.strategy,
        "sessions": written("session"),
        "observations": written("event"),
        "memories": written("memory") + written("fragment"),
        "summaries": 0,
        "skipped": report.total("existing") + report.total("skipped"),
        "report": report.to_dict(),
    }


def purged(report: PurgeReport) -> dict[str, Any]:
    return {
        "success": True,
        "dryRun": report.dry_run,
        "places": [{"where": p.where, "rows": p.rows, "matches": p.matches} for p in report.places],
        "rows": report.rows,
        "matches": report.matches,
        "purgedAt": report.record.at if report.record else None,
    }


def _purge_record(record: PurgeRecord | None) -> dict[str, Any] | None:
    if record is None:
        return None
    return {
        "at": record.at,
        "places": record.places,
        "rows": record.rows,
        "matches": record.matches,
    }
