"""The embedded SQLite engine: WAL, one writer thread with group commit, pooled readers."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from datetime import timedelta
from pathlib import Path

from memvault import jsontext
from memvault.domain import (
    BoardRow,
    Document,
    DocumentDraft,
    Event,
    Job,
    NewEvent,
    Observation,
    ObservationDraft,
    Session,
    StoreStats,
    Watermark,
    iso,
    utc_now,
)
from memvault.errors import StoreFailure
from memvault.graph.model import (
    MAX_DEPTH,
    MAX_LIMIT,
    MAX_OFFSET,
    GraphDelta,
    GraphSlice,
    GraphStats,
    parse_node_id,
)
from memvault.store import AppendOutcome, LexicalQuery, Store, migrations
from memvault.store import sqlite_documents as docs
from memvault.store import sqlite_graph as graph
from memvault.store import sqlite_jobs as jobs
from memvault.store import sqlite_pipeline as pipeline
from memvault.store.rows import BOARD_COLUMNS as _BOARD_COLUMNS
from memvault.store.rows import board_row as _board_row
from memvault.store.rows import observation as _observation
from memvault.store.rows import session as _session
from memvault.store.sqlite_append import append_requests
from memvault.store.sqlite_checkpoint import Checkpointer
from memvault.store.sqlite_vault import SQLiteVaultWrites
from memvault.store.writer import LOCK_WAIT_SECONDS, Batched, Writer

_ENSURE_SESSION = """
INSERT INTO sessions (id, project, cwd, agent_id, title, created_at, updated_at,
                      last_received_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
    title = coalesce(excluded.title, sessions.title),
    updated_at = excluded.updated_at
"""

_SESSION_COLUMNS = """
id, project, cwd, agent_id, title, board_session_id, created_at, first_event_at,
last_event_at, event_count, observation_count, summarized_at, summarized_seq, extracted_at,
extracted_seq, reflected_at, reflected_seq, graph_extracted_at, graph_extracted_seq,
summary_revision, summarized_observation_count, last_sweep_attempt_at, compressed_at,
compressed_seq
"""

_OBSERVATION_COLUMNS = """
o.event_seq, o.session_id, e.client_event_id, o.occurred_at, o.hook_type, o.type,
o.title, o.narrative, o.facts, o.files, o.concepts, o.importance, o.derived_by, o.updated_at
"""


class SQLiteStore(SQLiteVaultWrites, Store):
    engine = "sqlite"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: str = "FULL",
        lock_wait: float = LOCK_WAIT_SECONDS,
    ) -> None:
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous must be FULL or NORMAL, not {synchronous!r}")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._synchronous = synchronous
        self._lock_wait = lock_wait
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._local = threading.local()
        self._writer = Writer(
            self._connect_writer,
            name="memvault-sqlite-writer",
            location=str(self.path),
            lock_wait=lock_wait,
        )
        self._writer.call(_migrate)
        self._checkpointer = Checkpointer(self._connect)

    # -- connections ----------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        # Readers of a WAL database wait for a lock only in rare moments (another process
        # recovering the WAL index); no longer than a write would.
        conn = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=self._lock_wait
        )
        conn.execute(f"PRAGMA busy_timeout = {int(self._lock_wait * 1000)}")
        return conn

    def _connect_writer(self) -> sqlite3.Connection:
        conn = self._connect()
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise RuntimeError(f"could not switch {self.path} to WAL (got {mode})")
        conn.execute(f"PRAGMA synchronous = {self._synchronous}")
        conn.execute("PRAGMA busy_timeout = 0")  # the writer waits in short steps itself
        conn.execute("PRAGMA wal_autocheckpoint = 0")  # the checkpointer's job, off its path
        return conn

    def _reader(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            conn.execute("PRAGMA query_only = ON")
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    # -- writes ---------------------------------------------------------------------------

    def submit_events(self, events: Sequence[NewEvent]) -> Future[list[AppendOutcome]]:
        return self._writer.submit(Batched(append_requests, list(events)))

    def ensure_session(
        self,
        session_id: str,
        *,
        project: str,
        cwd: str,
        agent_id: str | None = None,
        title: str | None = None,
    ) -> Session:
        now = iso(utc_now())

        def op(conn: sqlite3.Connection) -> None:
            exists = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
            conn.execute(
                _ENSURE_SESSION, (session_id, project, cwd, agent_id, title, now, now, now)
            )
            if not exists:
                conn.execute("UPDATE counters SET value = value + 1 WHERE name = 'sessions'")

        self._writer.call(op)
        session = self.get_session(session_id)
        assert session is not None
        return session

    def link_board_session(
        self, session_id: str, board_session_id: str, *, replacing: str | None = None
    ) -> bool:
        def op(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute(
                "UPDATE sessions SET board_session_id = ?, updated_at = ? "
                "WHERE id = ? AND (board_session_id IS NULL OR board_session_id = ?)",
                (board_session_id, iso(utc_now()), session_id, replacing),
            )
            return cursor.rowcount == 1

        return self._writer.call(op)

    def board_links(self) -> dict[str, tuple[str, str]]:
        rows = self._reader().execute(
            "SELECT board_session_id, id, project FROM sessions WHERE board_session_id IS NOT NULL"
        )
        return {row[0]: (row[1], row[2]) for row in rows}

    def board_session_taken(self, board_session_id: str) -> bool:
        row = (
            self._reader()
            .execute("SELECT 1 FROM sessions WHERE board_session_id = ?", (board_session_id,))
            .fetchone()
        )
        return row is not None

    def replace_board_rows(self, rows: Sequence[BoardRow]) -> None:
        values = [
            (
                r.session_id,
                r.agent_name,
                r.topic,
                r.summary,
                r.keywords,
                r.status,
                jsontext.dumps(r.referenced_by),
                r.started_at,
                r.updated_at,
                position,
            )
            for position, r in enumerate(rows)
        ]

        def op(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM board_rows")
            conn.executemany(
                "INSERT OR REPLACE INTO board_rows (session_id, agent_name, topic, summary, "
                "keywords, status, referenced_by, started_at, updated_at, position) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )

        self._writer.call(op)

    def record_injected(self, session_id: str, items: Sequence[tuple[str, str]], at: str) -> None:
        rows = [(session_id, kind, item_id, at) for kind, item_id in items]

        def op(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "INSERT OR IGNORE INTO injections (session_id, kind, item_id, injected_at) "
                "VALUES (?, ?, ?, ?)",
                rows,
            )

        if rows:
            self._writer.call(op)

    def injected(self, session_id: str) -> set[tuple[str, str]]:
        rows = self._reader().execute(
            "SELECT kind, item_id FROM injections WHERE session_id = ?", (session_id,)
        )
        return {(row[0], row[1]) for row in rows}

    # -- the job queue --------------------------------------------------------------------

    def enqueue_job(
        self,
        kind: str,
        payload: dict,
        *,
        dedupe_key: str | None = None,
        run_after: str | None = None,
    ) -> bool:
        now = iso(utc_now())
        return self._writer.call(
            lambda conn: jobs.enqueue(
                conn, kind, payload, dedupe_key=dedupe_key, run_after=run_after or now, now=now
            )
        )

    def claim_job(self, worker: str, kinds: Sequence[str], *, lease_seconds: float) -> Job | None:
        now = utc_now()
        until = iso(now + timedelta(seconds=lease_seconds))
        kinds = list(kinds)
        return self._writer.call(
            lambda conn: jobs.claim(conn, worker, kinds, now=iso(now), lease_until=until)
        )

    def hurry_job(self, kind: str, dedupe_key: str) -> bool:
        now = iso(utc_now())
        return self._writer.call(
            lambda conn: (
                conn.execute(
                    "UPDATE jobs SET run_after = ?, updated_at = ? WHERE kind = ? "
                    "AND dedupe_key = ? AND state = 'pending' AND attempts = 0 AND run_after > ?",
                    (now, now, kind, dedupe_key, now),
                ).rowcount
                == 1
            )
        )

    def finish_job(self, job: Job) -> bool:
        return self._writer.call(lambda conn: jobs.finish(conn, job, iso(utc_now()), None))

    def prune_jobs(self, before: str) -> int:
        return self._writer.call(lambda conn: jobs.prune(conn, before))

    def fail_job(self, job: Job, error: str, *, retry_in: float | None) -> bool:
        now = utc_now()
        retry_at = None if retry_in is None else iso(now + timedelta(seconds=retry_in))
        return self._writer.call(
            lambda conn: jobs.fail(conn, job, error, now=iso(now), retry_at=retry_at)
        )

    # -- session summaries ----------------------------------------------------------------

    def events_after(self, session_id: str, seq: int, *, limit: int) -> list[Event]:
        rows = self._reader().execute(
            "SELECT seq, session_id, client_event_id, hook_type, project, cwd, agent_id, "
            "client_timestamp, occurred_at, received_at, payload FROM events "
            "WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (session_id, seq, limit),
        )
        return [Event(*row[:10], payload=json.loads(row[10])) for row in rows]

    def log_after(self, seq: int, *, limit: int) -> list[Event]:
        rows = self._reader().execute(
            "SELECT seq, session_id, client_event_id, hook_type, project, cwd, agent_id, "
            "client_timestamp, occurred_at, received_at, payload FROM events "
            "WHERE seq > ? ORDER BY seq LIMIT ?",
            (seq, limit),
        )
        return [Event(*row[:10], payload=json.loads(row[10])) for row in rows]

    def observations_of(self, seqs: Sequence[int]) -> list[Observation]:
        found: list[Observation] = []
        seqs = list(seqs)
        for start in range(0, len(seqs), 500):
            chunk = seqs[start : start + 500]
            rows = self._reader().execute(
                f"SELECT {_OBSERVATION_COLUMNS} FROM observations o "
                "JOIN events e ON e.seq = o.event_seq "
                f"WHERE o.event_seq IN ({', '.join('?' * len(chunk))}) ORDER BY o.event_seq",
                chunk,
            )
            found += [_observation(row) for row in rows]
        return found

    def session_summary(self, session_id: str) -> tuple[dict, int] | None:
        row = (
            self._reader()
            .execute(
                "SELECT summary, revision FROM session_summaries WHERE session_id = ?",
                (session_id,),
            )
            .fetchone()
        )
        return (json.loads(row[0]), row[1]) if row else None

    def write_summary(
        self, session_id: str, summary: dict, *, through: Watermark, observations: int
    ) -> bool:
        now = iso(utc_now())

        def op(conn: sqlite3.Connection) -> bool:
            before = conn.execute(
                "SELECT summarized_seq, summary_revision FROM sessions WHERE id = ?",
                (session_id,),
            ).fetchone()
            if before is None or (before[0] or 0) >= (through.seq or 0):
                return False  # another run got there first
            revision = before[1] + 1
            conn.execute(
                "INSERT INTO session_summaries (session_id, summary, revision, updated_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
                "summary = excluded.summary, revision = excluded.revision, "
                "updated_at = excluded.updated_at",
                (session_id, jsontext.dumps(summary), revision, now),
            )
            conn.execute(
                "UPDATE sessions SET summarized_at = ?, summarized_seq = ?, "
                "summary_revision = ?, summarized_observation_count = ? WHERE id = ?",
                (through.at, through.seq, revision, observations, session_id),
            )
            return True

        return self._writer.call(op)

    def advance_extraction(self, session_id: str, through: Watermark) -> bool:
        def op(conn: sqlite3.Connection) -> bool:
            moved = conn.execute(
                "UPDATE sessions SET extracted_at = ?, extracted_seq = ? "
                "WHERE id = ? AND coalesce(extracted_seq, 0) < ?",
                (through.at, through.seq, session_id, through.seq),
            ).rowcount
            pipeline.drop_results(conn, "extract", session_id)
            return moved == 1

        return self._writer.call(op)

    def sessions_to_summarize(
        self, *, threshold: int, idle_before: str, retry_before: str, limit: int
    ) -> list[str]:
        rows = self._reader().execute(
            "SELECT id FROM sessions WHERE observation_count > summarized_observation_count "
            "AND (observation_count - summarized_observation_count >= ? "
            "     OR last_received_at < ?) "
            "AND (last_sweep_attempt_at IS NULL OR last_sweep_attempt_at < ?) "
            "ORDER BY last_received_at LIMIT ?",
            (threshold, idle_before, retry_before, limit),
        )
        return [row[0] for row in rows]

    def mark_summary_attempt(self, session_id: str, at: str) -> None:
        self._writer.call(
            lambda conn: conn.execute(
                "UPDATE sessions SET last_sweep_attempt_at = ? WHERE id = ?", (at, session_id)
            )
        )

    # -- compression, rebuilds ------------------------------------------------------------

    def upgrade_observations(
        self,
        session_id: str,
        upgrades: Sequence[tuple[int, ObservationDraft]],
        *,
        derived_by: str,
        through: Watermark,
    ) -> bool:
        upgrades, now = list(upgrades), iso(utc_now())
        return self._writer.call(
            lambda conn: pipeline.upgrade_observations(
                conn, session_id, upgrades, derived_by=derived_by, through=through, now=now
            )
        )

    def rederive_observations(self, drafts: Sequence[tuple[int, ObservationDraft]]) -> int:
        drafts, now = list(drafts), iso(utc_now())
        return self._writer.call(lambda conn: pipeline.rederive_observations(conn, drafts, now))

    def observation_changes(self, after: int, *, limit: int) -> list[tuple[int, int]]:
        return pipeline.observation_changes(self._reader(), after, limit)

    def sessions_to_compress(self, *, limit: int) -> list[str]:
        return pipeline.sessions_to_compress(self._reader(), limit)

    def record_pipeline_fragment(self, path: str, sha256: str) -> None:
        now = iso(utc_now())
        self._writer.call(lambda conn: pipeline.record_fragment(conn, path, sha256, now))

    def pipeline_fragment(self, path: str) -> str | None:
        row = (
            self._reader()
            .execute("SELECT sha256 FROM pipeline_fragments WHERE path = ?", (path,))
            .fetchone()
        )
        return row[0] if row else None

    def pipeline_fragments(self) -> dict[str, str]:
        return dict(self._reader().execute("SELECT path, sha256 FROM pipeline_fragments"))

    def forget_pipeline_fragments(self, paths: Sequence[str]) -> None:
        rows = [(path,) for path in paths]
        self._writer.call(
            lambda conn: conn.executemany("DELETE FROM pipeline_fragments WHERE path = ?", rows)
        )

    def keep_result(self, kind: str, session_id: str, through: int, result: str) -> None:
        now = iso(utc_now())
        self._writer.call(
            lambda conn: pipeline.keep_result(conn, kind, session_id, through, result, now)
        )

    def kept_result(self, kind: str, session_id: str, through: int) -> str | None:
        return pipeline.kept_result(self._reader(), kind, session_id, through)

    def forget_events(self, event_ids: Sequence[str]) -> None:
        ids, now = list(event_ids), iso(utc_now())
        self._writer.call(lambda conn: pipeline.forget_events(conn, ids, now))

    def forgotten_events(self, event_ids: Sequence[str]) -> set[str]:
        return pipeline.forgotten(self._reader(), event_ids)

    def reset_derived(self) -> None:
        self._writer.call(pipeline.reset_derived)

    # -- the entity graph -----------------------------------------------------------------

    def write_graph(
        self,
        session_id: str,
        delta: GraphDelta,
        *,
        through: Watermark,
        after: int | None = None,
    ) -> bool:
        def op(conn: sqlite3.Connection) -> bool:
            if not graph.advance(conn, session_id, through, after):
                return False
            graph.write(conn, delta)
            return True

        return self._writer.call(op)

    def write_fragment_graph(self, delta: GraphDelta) -> None:
        self._writer.call(lambda conn: graph.write(conn, delta))

    def graph_query(
        self,
        *,
        start: str | None = None,
        kind: str | None = None,
        text: str | None = None,
        depth: int = 1,
        limit: int = 50,
        offset: int = 0,
    ) -> GraphSlice:
        ref = None if start is None else parse_node_id(start)
        if start is not None and ref is None:
            return GraphSlice(nodes=[], edges=[])
        return graph.query(
            self._reader(),
            start=ref,
            kind=kind,
            text=text,
            depth=max(0, min(depth, MAX_DEPTH)),
            limit=max(1, min(limit, MAX_LIMIT)),
            offset=max(0, min(offset, MAX_OFFSET)),
        )

    def graph_stats(self) -> GraphStats:
        return graph.stats(self._reader())

    def reset_graph(self) -> GraphStats:
        return self._writer.call(graph.reset)

    def forget_graph_source(self, source: str) -> None:
        self._writer.call(lambda conn: graph.forget(conn, source))

    def sessions_behind_graph(self, *, limit: int) -> list[str]:
        return graph.sessions_behind(self._reader(), limit)

    def events_before(self, session_id: str, seq: int, *, limit: int) -> list[Event]:
        return graph.events_before(self._reader(), session_id, seq, limit)

    # -- the search index -----------------------------------------------------------------

    def write_documents(
        self,
        upserts: Sequence[DocumentDraft] = (),
        deletes: Sequence[tuple[str, str]] = (),
        *,
        cursor: tuple[str, int] | None = None,
    ) -> None:
        upserts, deletes = list(upserts), list(deletes)
        self._writer.call(lambda conn: docs.write_documents(conn, upserts, deletes, cursor))

    def cursor(self, name: str) -> int:
        return docs.get_cursor(self._reader(), name)

    def observations_after(self, seq: int, *, limit: int) -> list[tuple[Observation, str]]:
        rows = self._reader().execute(
            f"SELECT {_OBSERVATION_COLUMNS}, e.project FROM observations o "
            "JOIN events e ON e.seq = o.event_seq WHERE o.event_seq > ? "
            "ORDER BY o.event_seq LIMIT ?",
            (seq, limit),
        )
        return [(_observation(row), row[-1]) for row in rows]

    def observation_window(
        self, session_id: str, first: tuple[str, int], last: tuple[str, int], *, margin: int
    ) -> list[tuple[Observation, str]]:
        conn = self._reader()
        select = (
            f"SELECT {_OBSERVATION_COLUMNS}, e.project FROM events e "
            "JOIN observations o ON o.event_seq = e.seq WHERE e.session_id = ? "
        )
        before = conn.execute(
            select + "AND (e.occurred_at, e.seq) < (?, ?) "
            "ORDER BY e.occurred_at DESC, e.seq DESC LIMIT ?",
            (session_id, *first, margin),
        ).fetchall()
        middle = conn.execute(
            select + "AND (e.occurred_at, e.seq) >= (?, ?) AND (e.occurred_at, e.seq) <= (?, ?) "
            "ORDER BY e.occurred_at, e.seq",
            (session_id, *first, *last),
        ).fetchall()
        after = conn.execute(
            select + "AND (e.occurred_at, e.seq) > (?, ?) ORDER BY e.occurred_at, e.seq LIMIT ?",
            (session_id, *last, margin),
        ).fetchall()
        return [(_observation(row), row[-1]) for row in [*reversed(before), *middle, *after]]

    def lexical_search(
        self,
        query: LexicalQuery,
        *,
        kinds: Sequence[str],
        project: str | None = None,
        include_archived: bool = False,
        limit: int = 100,
        weights: tuple[float, float, float, float] = (1.0, 1.0, 0.5, 0.5),
        newest: int | None = None,
    ) -> list[tuple[int, float]]:
        return docs.lexical_search(
            self._reader(),
            query,
            kinds=kinds,
            project=project,
            include_archived=include_archived,
            limit=limit,
            weights=weights,
            newest=newest,
        )

    def move_access(self, kind: str, moves: Sequence[tuple[str, str]]) -> None:
        moves = list(moves)
        self._writer.call(lambda conn: docs.move_access(conn, kind, moves))

    def sync(self) -> None:
        self._writer.call(lambda conn: None)

    def term_counts(self, terms: Sequence[str], *, cap: int) -> dict[str, int]:
        return docs.term_counts(self._reader(), terms, cap)

    def document_count(self) -> int:
        return self._reader().execute("SELECT count(*) FROM documents").fetchone()[0]

    def documents(self, ids: Sequence[int]) -> dict[int, Document]:
        return docs.documents_by_id(self._reader(), list(ids))

    def document(self, kind: str, key: str) -> Document | None:
        return docs.document_by_key(self._reader(), kind, key)

    def list_documents(
        self,
        kind: str,
        *,
        project: str | None = None,
        include_archived: bool = False,
        limit: int = 50,
        offset: int = 0,
    ) -> list[Document]:
        return docs.list_documents(
            self._reader(),
            kind=kind,
            project=project,
            include_archived=include_archived,
            limit=limit,
            offset=offset,
        )

    def document_stamps(self, kind: str) -> dict[str, tuple[str, float | None]]:
        return docs.document_stamps(self._reader(), kind)

    def documents_to_embed(self, after_revision: int, *, limit: int) -> list[tuple[int, int, str]]:
        return docs.to_embed(self._reader(), after_revision, limit)

    def write_vectors(
        self, model: str, vectors: Sequence[tuple[int, int, bytes]], *, cursor: tuple[str, int]
    ) -> None:
        vectors = list(vectors)
        self._writer.call(lambda conn: docs.write_vectors(conn, model, vectors, cursor))

    def vectors(self, model: str) -> list[tuple[int, str, bytes]]:
        return list(docs.iter_vectors(self._reader(), model))

    def vector_changes(
        self, model: str, after_revision: int, through_revision: int, *, limit: int
    ) -> list[tuple[int, str, int, bytes | None]]:
        return docs.vector_changes(self._reader(), model, after_revision, through_revision, limit)

    def document_kinds(self, ids: Sequence[int]) -> dict[int, str]:
        return docs.document_kinds(self._reader(), list(ids))

    def document_ids(
        self, *, kinds: Sequence[str], project: str, include_archived: bool = False
    ) -> list[int]:
        return docs.document_ids(
            self._reader(), kinds=kinds, project=project, include_archived=include_archived
        )

    def record_access(self, keys: Sequence[tuple[str, str]], at: str) -> None:
        keys = list(keys)
        # Queued, not waited for: a read must not wait for a commit. A failure shows in
        # the writer's state like any other write's.
        self._writer.submit(lambda conn: docs.record_access(conn, keys, at))

    # -- reads ----------------------------------------------------------------------------

    def board_rows(self, *, status: str | None = None, limit: int = 1000) -> list[BoardRow]:
        if status is None:
            rows = self._reader().execute(
                f"SELECT {_BOARD_COLUMNS} FROM board_rows ORDER BY position LIMIT ?", (limit,)
            )
        else:
            rows = self._reader().execute(
                f"SELECT {_BOARD_COLUMNS} FROM board_rows WHERE status = ? "
                "ORDER BY position LIMIT ?",
                (status, limit),
            )
        return [_board_row(row) for row in rows]

    def board_row(self, session_id: str) -> BoardRow | None:
        rows = self._reader().execute(
            f"SELECT {_BOARD_COLUMNS} FROM board_rows WHERE session_id = ?", (session_id,)
        )
        return next((_board_row(row) for row in rows), None)

    def get_session(self, session_id: str) -> Session | None:
        row = (
            self._reader()
            .execute(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,))
            .fetchone()
        )
        return _session(row) if row else None

    def list_sessions(
        self, *, limit: int, offset: int = 0, agent_id: str | None = None
    ) -> list[Session]:
        if agent_id is None:
            sql = (
                f"SELECT {_SESSION_COLUMNS} FROM sessions "
                "ORDER BY last_received_at DESC, last_event_seq DESC LIMIT ? OFFSET ?"
            )
            params: tuple = (limit, offset)
        else:
            sql = (
                f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE agent_id = ? "
                "ORDER BY last_received_at DESC, last_event_seq DESC LIMIT ? OFFSET ?"
            )
            params = (agent_id, limit, offset)
        return [_session(row) for row in self._reader().execute(sql, params)]

    def list_observations(
        self, session_id: str, *, limit: int, offset: int = 0
    ) -> list[Observation]:
        rows = self._reader().execute(
            f"SELECT {_OBSERVATION_COLUMNS} FROM events e "
            "JOIN observations o ON o.event_seq = e.seq WHERE e.session_id = ? "
            "ORDER BY e.occurred_at, e.seq LIMIT ? OFFSET ?",
            (session_id, limit, offset),
        )
        return [_observation(row) for row in rows]

    def list_events(self, session_id: str, *, limit: int, offset: int = 0) -> list[Event]:
        rows = self._reader().execute(
            "SELECT seq, session_id, client_event_id, hook_type, project, cwd, agent_id, "
            "client_timestamp, occurred_at, received_at, payload FROM events "
            "WHERE session_id = ? ORDER BY occurred_at, seq LIMIT ? OFFSET ?",
            (session_id, limit, offset),
        )
        return [Event(*row[:10], payload=json.loads(row[10])) for row in rows]

    def stats(self) -> StoreStats:
        conn = self._reader()
        counts = dict(conn.execute("SELECT name, value FROM counters").fetchall())
        jobs = dict(conn.execute("SELECT state, count(*) FROM jobs GROUP BY state").fetchall())
        version = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0]
        size = sum(
            p.stat().st_size
            for p in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm"))
            if p.exists()
        )
        return StoreStats(
            engine=self.engine,
            location=str(self.path),
            size_bytes=size,
            events=counts["events"],
            observations=counts["observations"],
            sessions=counts["sessions"],
            jobs_pending=jobs.get("pending", 0),
            jobs_running=jobs.get("running", 0),
            jobs_failed=jobs.get("failed", 0),
            schema_version=version or 0,
        )

    def last_event_seq(self) -> int:
        row = self._reader().execute("SELECT max(seq) FROM events").fetchone()
        return row[0] or 0

    def observations_since(self, seq: int) -> int:
        # A range of the primary key: as long as the backlog, not the table.
        query = "SELECT count(*) FROM observations WHERE event_seq > ?"
        return self._reader().execute(query, (seq,)).fetchone()[0]

    def documents_since(self, revision: int) -> int:
        query = "SELECT count(*) FROM documents WHERE revision > ?"  # documents_revision
        return self._reader().execute(query, (revision,)).fetchone()[0]

    def fragment_counts(self) -> tuple[int, int]:
        counts = dict(
            self._reader().execute(
                "SELECT archived, count(*) FROM documents WHERE kind = 'fragment' GROUP BY archived"
            )
        )
        return counts.get(0, 0), counts.get(1, 0)

    def board_row_count(self) -> int:
        # The board is a file a person reads: hundreds of rows, not the event log's millions.
        return self._reader().execute("SELECT count(*) FROM board_rows").fetchone()[0]

    @property
    def pending_writes(self) -> int:
        return self._writer.pending

    @property
    def write_failure(self) -> BaseException | None:
        return self._writer.failure

    def write_trouble(self) -> str | None:
        locked_for = self._writer.locked_for
        if locked_for is not None and locked_for >= PROBE_WAIT:
            return (
                f"the database {self.path} is locked by another process; writes have "
                f"waited {locked_for:.1f} s"
            )
        free = shutil.disk_usage(self.path.parent).free
        if free < LOW_SPACE_BYTES:
            return f"the disk holding {self.path} is full ({free // 1024} KiB free)"
        if self._writer.trouble is None:
            return None
        # The last write failed: try a small one, so the answer changes as soon as writes
        # pass again, not only after the next request's write does.
        try:
            self._writer.submit(_probe, wait=PROBE_WAIT).result(self._lock_wait + 1)
        except StoreFailure as exc:
            return str(exc)
        except TimeoutError:
            trouble = self._writer.trouble
            return None if trouble is None else str(trouble)
        return None

    def close(self) -> None:
        self._checkpointer.close()
        self._writer.close()
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers.clear()


PROBE_WAIT = 0.2  # seconds a health check's write waits for another process's lock
# Less room than this left on the database's disk, and the next larger write fails.
LOW_SPACE_BYTES = 1024 * 1024


def _probe(conn: sqlite3.Connection) -> None:
    """A write of one page, as small as a write gets: it needs the lock and room in the WAL."""
    conn.execute("UPDATE counters SET value = value WHERE name = 'sessions'")


def applied_schema_version(path: str | os.PathLike[str]) -> int | None:
    """The newest migration applied to the database at ``path``, read only (0 when it has
    none); None when there is no database file."""
    if not Path(path).is_file():
        return None
    conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] or 0
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return 0
        raise
    finally:
        conn.close()


def _migrate(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    applied = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
    for migration in migrations.load("sqlite"):
        if migration.version in applied:
            continue
        for statement in _statements(migration.sql):
            conn.execute(statement)
        conn.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
            (migration.version, migration.name, iso(utc_now())),
        )


def _statements(script: str) -> list[str]:
    """Split a script into complete statements (trigger bodies contain semicolons)."""
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        if not buffer and (not line.strip() or line.lstrip().startswith("--")):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        raise ValueError(f"incomplete statement in migration: {buffer[:80]!r}")
    return statements
