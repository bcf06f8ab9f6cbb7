"""Keeps the search index in step with the event log and the vault.

Three followers, each resumable and each safe to run again:

- observations: new events' observations are indexed in batches, after a cursor moved in
  the same transaction, with their neighbouring events as context (the one before is
  re-indexed when its next neighbour arrives); observations rewritten in place are
  re-indexed by a second cursor over the store's log of changes;
- the vault: fragments (``agent-memory/``, its ``_archive/`` flagged archived) and session
  summaries (board rows with their snapshots) are compared by mtime and content hash, so a
  hand edit is re-indexed and a deleted file dropped;
- vectors: documents whose embedded text changed get a vector, when an embedder exists.

``search/worker.py`` runs them in the background while a server runs.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path

from memvault.derive.digest import TEXT_HOOKS
from memvault.derive.digest import digest as session_digest
from memvault.derive.synthetic import whole_text
from memvault.domain import DocumentDraft, Observation
from memvault.search import documents
from memvault.search.semantic import Semantic
from memvault.store import Store
from memvault.vault import frontmatter
from memvault.vault.board_files import snapshot_file
from memvault.vault.files import read_text, refused_link
from memvault.vault.fragments import ARCHIVE, PROJECTS, Fragment

log = logging.getLogger(__name__)

OBSERVATIONS_CURSOR = "index:observations"
CHANGES_CURSOR = "index:observation-changes"
SESSIONS_CURSOR = "index:sessions"  # the events whose sessions' documents are made again
BATCH = 100  # small write transactions: ingest never queues long behind indexing
# Two events either side: measured on LoCoMo, ±2 at weight 0.5 beats ±1, ±3 and ±4.
CONTEXT_BEFORE = 2
CONTEXT_AFTER = 2
SUMMARY_EVENTS = 5  # event ids a session summary carries
SESSION_EVENTS = 5_000  # of a session's events, what its document reads at most
SESSION_LAG = 2_000  # events indexed at most before their sessions' documents are made again


@dataclass(frozen=True, slots=True)
class Backlog:
    """How far the index is behind: what a search cannot find yet."""

    last_event_seq: int  # the newest event stored
    indexed_through: int  # the newest event whose observation is indexed
    events_not_indexed: int
    documents_not_embedded: int | None  # None: no embedder, nothing to wait for
    # Observations rewritten in place (an LLM's compression, a purge, an upgrade) whose
    # documents and neighbours the index has not read again yet.
    changes_not_indexed: int = 0
    # Whether this process indexes the log and embeds documents: on a database replicas
    # share, only the vault's owner does; the others follow what it writes.
    indexes_here: bool = True

    @property
    def caught_up(self) -> bool:
        return not (
            self.events_not_indexed or self.changes_not_indexed or self.documents_not_embedded
        )


@dataclass(eq=False)
class Indexer:
    store: Store
    _: KW_ONLY
    vault: Path
    fragments: Path
    sessions: Path
    semantic: Semantic | None = None
    refresh_board: Callable[[], object] | None = None
    # Whether this process's vault folder is the vault; a replica that does not own it
    # scans none (its folder may be empty, and a scan drops what it does not find).
    owns_vault: Callable[[], bool] = lambda: True
    # One pass at a time per follower set.
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _first_events: dict[str, list[str]] = field(default_factory=dict, init=False)

    # -- observations ---------------------------------------------------------------------

    def index_observations(self, *, batch: int = BATCH) -> int:
        """Index the next batch of new observations; how many were new.

        Each is indexed with its neighbours as context; neighbours indexed in an earlier
        batch are indexed again, since they now have this one in their context. A
        session's part of the batch is read in one window, not event by event."""
        with self._lock:
            cursor = self.store.cursor(OBSERVATIONS_CURSOR)
            items = self.store.observations_after(cursor, limit=batch)
            if not items:
                self._index_sessions(cursor)
                return 0
            drafts = self._observation_drafts([o for o, _ in items], indexed_through=cursor)
            through = items[-1][0].event_seq
            self.store.write_documents(list(drafts.values()), cursor=(OBSERVATIONS_CURSOR, through))
            lag = through - self.store.cursor(SESSIONS_CURSOR)
            if len(items) < batch or lag >= SESSION_LAG:
                self._index_sessions(through)
            return len(items)

    def _index_sessions(self, through: int) -> None:
        """The documents of the sessions with events indexed since the last time, made again
        once: when the log's backlog is indexed (or every ``SESSION_LAG`` events while it is
        not), not for each batch, which read a long session whole again every 25 events."""
        after = self.store.cursor(SESSIONS_CURSOR)
        while after < through:  # a store from before session documents: all, a part a time
            upto = min(through, after + SESSION_LAG)
            drafts = self._session_drafts(self.store.sessions_between(after, upto))
            self.store.write_documents(drafts, cursor=(SESSIONS_CURSOR, upto))
            after = upto

    def index_changes(self, *, batch: int = BATCH) -> int:
        """Re-index observations rewritten in place (an LLM upgrade, a rebuild), with the
        neighbours that carry them as context; how many changes were taken."""
        with self._lock:
            cursor = self.store.cursor(CHANGES_CURSOR)
            changes = self.store.observation_changes(cursor, limit=batch)
            if not changes:
                return 0
            indexed = self.store.cursor(OBSERVATIONS_CURSOR)
            seqs = sorted({seq for _, seq in changes if seq <= indexed})
            # Observations not indexed yet are indexed as they are now when their turn comes.
            drafts = self._observation_drafts(
                self.store.observations_of(seqs), indexed_through=indexed
            )
            self.store.write_documents(
                list(drafts.values()), cursor=(CHANGES_CURSOR, changes[-1][0])
            )
            return len(changes)

    def _observation_drafts(
        self, new: list[Observation], *, indexed_through: int
    ) -> dict[str, DocumentDraft]:
        """Documents for ``new`` and for their already indexed neighbours."""
        by_session: dict[str, list[Observation]] = {}
        for observation in new:
            by_session.setdefault(observation.session_id, []).append(observation)
        drafts: dict[str, DocumentDraft] = {}
        for session_id, mine in by_session.items():
            keys = sorted((o.occurred_at, o.event_seq) for o in mine)
            window = self.store.observation_window(
                session_id, keys[0], keys[-1], margin=2 * max(CONTEXT_BEFORE, CONTEXT_AFTER)
            )
            position = {o.id: i for i, (o, _) in enumerate(window)}
            targets: set[int] = set()
            for observation in mine:
                at = position.get(observation.id)
                if at is None:  # its event's time changed under it: read with the next pass
                    log.warning("observation %s is not where its event is", observation.id)
                    continue
                targets.add(at)
                for other in range(at - CONTEXT_BEFORE, at + CONTEXT_AFTER + 1):
                    if 0 <= other < len(window) and window[other][0].event_seq <= indexed_through:
                        targets.add(other)
            chosen = [window[at] for at in sorted(targets)]
            whole = self._whole_texts([o for o, _ in chosen])
            for at in sorted(targets):
                observation, project = window[at]
                around = [o for o, _ in window[max(at - CONTEXT_BEFORE, 0) : at]]
                around += [o for o, _ in window[at + 1 : at + 1 + CONTEXT_AFTER]]
                drafts[observation.id] = documents.observation_document(
                    observation, project, around, whole=whole.get(observation.event_seq)
                )
        return drafts

    def _whole_texts(self, observations: list[Observation]) -> dict[int, str]:
        """The whole text of the events whose observation clipped it: what search reads."""
        clipped = [o.event_seq for o in observations if o.narrative.endswith("…")]
        return {
            event.seq: whole_text(event.hook_type, event.payload)
            for event in self.store.events_of(clipped)
        }

    def _session_drafts(self, touched: dict[str, str]) -> list[DocumentDraft]:
        """The session documents of the sessions a batch touched, read again whole: their
        requests and replies from the raw events, their tool calls from observations."""
        drafts = []
        for session_id, project in touched.items():
            session = self.store.get_session(session_id)
            if session is None:
                continue
            digest = session_digest(
                self.store.list_events(session_id, limit=SESSION_EVENTS, hook_types=TEXT_HOOKS),
                self.store.list_observations(session_id, limit=SESSION_EVENTS),
            )
            if not digest.empty:
                drafts.append(documents.session_document(session, digest, project=project))
        return drafts

    # -- the vault ------------------------------------------------------------------------

    def scan_vault(self) -> int:
        """Re-index vault files that changed and drop those that are gone; how many."""
        if not self.owns_vault():
            return 0
        with self._lock:
            return self._scan_fragments() + self._scan_summaries()

    def index_fragment(self, path: Path) -> DocumentDraft | None:
        """Index one fragment file now (after memvault wrote it)."""
        with self._lock:
            draft = self._fragment_draft(path)
            if draft is not None:
                self.store.write_documents([draft])
            return draft

    def _fragment_files(self) -> Iterator[tuple[str, float]]:
        """(key, mtime) of every fragment file: a walk with one stat per file, since the
        watcher-less scan runs often."""
        if not self.fragments.is_dir():
            return
        prefix = self.fragments.relative_to(self.vault).as_posix()
        stack = [(str(self.fragments), prefix, True)]
        while stack:
            folder, key_prefix, top = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                name = entry.name
                if name.startswith(".") or (top and name == PROJECTS):
                    continue
                key = f"{key_prefix}/{name}"
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, key, False))
                    elif name.endswith(".md"):
                        if entry.is_symlink() and refused_link(
                            self.vault, Path(entry.path), "fragment"
                        ):
                            continue  # not the vault's: dropped from the index if it was in
                        yield key, entry.stat().st_mtime
                except OSError:
                    continue

    def _key(self, path: Path) -> str:
        return path.relative_to(self.vault).as_posix()

    def _fragment_draft(self, path: Path) -> DocumentDraft | None:
        if refused_link(self.vault, path, "fragment"):
            return None  # its contents are not the vault's: never searched nor served
        try:
            stat = path.stat()
            fragment = Fragment.read(path)
        except (OSError, UnicodeDecodeError, frontmatter.FrontmatterError):
            return None  # gone, or unreadable: `memvault fragments check` says why
        archived = path.relative_to(self.fragments).parts[0] == ARCHIVE
        modified = dt.datetime.fromtimestamp(stat.st_mtime, dt.UTC)
        return documents.fragment_document(
            fragment,
            self._key(path),
            archived=archived,
            mtime=stat.st_mtime,
            modified=modified.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        )

    def _scan_fragments(self) -> int:
        known = self.store.document_stamps("fragment")
        changed: list[DocumentDraft] = []
        seen: set[str] = set()
        for key, mtime in self._fragment_files():
            seen.add(key)
            stamp = known.get(key)
            if stamp is not None and stamp[1] == mtime:
                continue
            draft = self._fragment_draft(self.vault / key)
            if draft is None:
                seen.discard(key)
            elif stamp is None or stamp[0] != draft.content_hash or stamp[1] != mtime:
                changed.append(draft)
        gone = [("fragment", key) for key in known if key not in seen]
        if changed or gone:
            self.store.write_documents(changed, gone)
        return len(changed) + len(gone)

    def _scan_summaries(self) -> int:
        if self.refresh_board is not None:
            self.refresh_board()  # the board mirror first, so rows edited by hand count
        known = self.store.document_stamps("summary")
        links = self.store.board_links()
        worked = self.store.board_last_events()
        changed: list[DocumentDraft] = []
        seen: set[str] = set()
        for row in self.store.board_rows(limit=100_000):
            seen.add(row.session_id)
            try:
                snapshot_path = snapshot_file(self.sessions, row.session_id)
                snapshot = read_text(snapshot_path)
            except (OSError, UnicodeDecodeError, ValueError):  # ValueError: not a session id
                snapshot_path, snapshot = None, None
            link = links.get(row.session_id)
            event_ids = self._session_event_ids(link[0]) if link else []
            draft = documents.summary_document(
                row,
                snapshot=frontmatter.split(snapshot)[1] if snapshot else None,
                path=self._key(
                    snapshot_path
                    if snapshot_path and snapshot
                    else self.sessions.parent / "index.md"
                ),
                project=link[1] if link else None,
                event_ids=event_ids,
                mtime=None,
                worked_at=worked.get(row.session_id),
            )
            if known.get(row.session_id, (None,))[0] != draft.content_hash:
                changed.append(draft)
        gone = [("summary", key) for key in known if key not in seen]
        if changed or gone:
            self.store.write_documents(changed, gone)
        return len(changed) + len(gone)

    def _session_event_ids(self, session_id: str) -> list[str]:
        """A session summary's provenance: the session's first events. Once there are
        enough they never change, so each scan does not ask the store again."""
        known = self._first_events.get(session_id)
        if known is not None:
            return known
        ids = [
            event.client_event_id or f"evt_{event.seq}"
            for event in self.store.list_events(session_id, limit=SUMMARY_EVENTS)
        ]
        if len(ids) == SUMMARY_EVENTS:
            self._first_events[session_id] = ids
        return ids

    def paused(self) -> threading.Lock:
        """Hold this to change vault files and their documents with no pass in between."""
        return self._lock

    # -- vectors --------------------------------------------------------------------------

    def embed_pending(self) -> int:
        if self.semantic is None:
            return 0
        return self.semantic.embed_pending()

    # -- everything -----------------------------------------------------------------------

    def backlog(self) -> Backlog:
        """What is stored but not searchable yet: events past the cursor, documents past
        the embedder's cursor. Counted over the backlog only, never a whole table."""
        indexed = self.store.cursor(OBSERVATIONS_CURSOR)
        return Backlog(
            last_event_seq=self.store.last_event_seq(),
            indexed_through=indexed,
            events_not_indexed=self.store.observations_since(indexed),
            changes_not_indexed=self.store.observation_changes_since(
                self.store.cursor(CHANGES_CURSOR)
            ),
            documents_not_embedded=None if self.semantic is None else self.semantic.pending(),
            indexes_here=self.owns_vault(),
        )

    def catch_up(self) -> int:
        """Run every follower until none has work left; how much was done."""
        done = self.scan_vault()
        while (step := self.index_observations()) > 0:
            done += step
        while (step := self.index_changes()) > 0:
            done += step
        while (step := self.embed_pending()) > 0:
            done += step
        return done
