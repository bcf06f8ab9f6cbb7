"""What a block may tell of: from a search's hits, the fragments that pass the relevance
floor and the sessions a request is most about (search/focus.py), each told once; never the
asking session's own memory, nor a session's bookkeeping."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from memvault.derive.fragments import confirmed
from memvault.derive.names import (
    Names,
    chosen_names,
    code_names,
    file_names,
    of_project,
    plain_word,
    written_names,
)
from memvault.derive.supersede import DECISION_TAG, files_in
from memvault.domain import Document
from memvault.search import context as packing
from memvault.search import focus
from memvault.search.documents import (
    DECISIONS_READ,
    bookkeeping_observation,
    decisions,
    placeholder_row,
)
from memvault.search.engine import Hit, one_per_session
from memvault.store import KindStamp, Store
from memvault.vault.fragments import retired_mark
from memvault.vault.remember import facts_from

# Sessions a prompt block tells of (by their board row or their own document), and its
# activity lines (which sessions they may come from: search/focus.py).
SESSIONS_TOLD = 5
OBSERVATIONS_TOLD = 10
# Decisions a prompt block tells of because the request names what they are about; a
# decision is in force unless held no surer than an agent's passing "instead of", said
# once (``derive.fragments.UNCONFIRMED``): the user said it, or both did, or the agent
# declared it as a decision made, or an LLM made it, or a person wrote it. On the real
# sessions, 13 of the 14 lines the unconfirmed ones would add were noise.
DECISIONS_TOLD = 2


def prompt_hits(
    found: Sequence[list[Hit]],
    weights: Mapping[str, float],
    held: Callable[[Hit], Iterable[str]],
    links: Mapping[str, str],
    *,
    session_id: str | None = None,
    own_row: str | None = None,
    floor: float = packing.MATCHED_FLOOR,
    most: int = focus.FOCUS_SESSIONS,
    session_floor: float = focus.SESSION_FLOOR,
    cosine: float = focus.COSINE,
    same: float = packing.SAME_LINE,
    rivals: int = focus.RIVALS,
    rival_gap: float = focus.RIVAL_GAP,
    close_rivals: int = focus.CLOSE_RIVALS,
    close_gap: float = focus.CLOSE_GAP,
    passing: bool = True,
    request: str = "",
    project: str | None = None,
) -> tuple[list[Hit], list[Hit], list[Hit]]:
    """What a prompt block may tell of, from a search's fragments, board rows, sessions and
    observations (``CONTEXT_QUOTAS``' order): the fragments that pass the relevance floor,
    and the sessions the request is most about (``focus.focused``) with their lines, each
    session and each line told once (``packing.distinct``); the sessions that write the
    ``request``'s code names whole (``derive.names.written_names``: its first few, none the
    ``project``'s own) count for more. A fragment an agent said once in passing
    (``in_passing``) is told only with a session it came from (``passing``; off, as any
    other fragment). Nothing of the asking session
    (``session_id``, its board row ``own_row``), nor its bookkeeping."""
    fragments, summaries, sessions, observations = found

    def share(hit: Hit) -> float:
        return packing.covered(weights, held(hit))

    def close(hit: Hit) -> bool:
        return hit.semantic is not None and hit.semantic >= cosine

    fragments = [h for h in fragments if share(h) >= floor or close(h)]
    summaries, sessions = (
        [h for h in hits if tellable_summary(h.document, own_row, session_id)]
        for hits in (summaries, sessions)
    )
    observations = [h for h in observations if tellable_observation(h.document, session_id)]
    wanted = written_names(request, besides=project)
    written: dict[int, tuple[str, ...]] = {}

    def named(hit: Hit) -> tuple[str, ...]:
        key = hit.document.id
        if key not in written:
            document = hit.document
            text = f"{document.title}\n{document.summary}\n{document.body}"
            # A name is only where its last part is (a path's file name may follow doubled
            # or escaped separators): read as words next.
            lowered = text.lower()
            maybe = [n for n in wanted if n.lower().rsplit("/", 1)[-1] in lowered]
            names = Names(text, parts=True) if maybe else None
            written[key] = tuple(name for name in maybe if names and names.names(name))
        return written[key]

    summaries, sessions, observations = focus.focused(
        [summaries, sessions, observations],
        held,
        weights,
        links,
        close=close,
        named=named,
        names=wanted,
        most=most,
        floor=session_floor,
        rivals=rivals,
        gap=rival_gap,
        close_rivals=close_rivals,
        close_gap=close_gap,
    )
    # What an agent said once in passing is that session's, not the project's: told with
    # the session when the request is about it, never alone.
    about = {
        session
        for hits in (summaries, sessions, observations)
        for hit in hits
        if (session := focus.session_of(hit, links))
    }
    fragments = [
        h
        for h in fragments
        if not passing or not in_passing(h.document) or drawn_from(h.document) & about
    ]
    # A session is told once: by its board row or by its own document.
    told = one_per_session(sorted([*summaries, *sessions], key=lambda h: h.score, reverse=True))
    return fragments, told[:SESSIONS_TOLD], packing.distinct(observations, same)[:OBSERVATIONS_TOLD]


def in_passing(document: Document) -> bool:
    """Whether a fragment is what an agent said once in passing in a session (held no surer
    than ``derive.fragments.UNCONFIRMED``, drawn from a session): that session's, not the
    project's. One saved by hand or through a tool (no session it came from) is the
    project's, however sure it is held."""
    return not confirmed(document.meta.get("confidence")) and bool(drawn_from(document))


def drawn_from(document: Document) -> set[str]:
    """The host sessions a fragment was learned from (its ``source`` and every source
    merged into it, each "session <id>")."""
    given = [document.meta.get("source"), *(document.meta.get("sources") or ())]
    return {
        str(source).removeprefix("session ")
        for source in given
        if str(source or "").startswith("session ")
    }


def decisions_named(
    request: str,
    fragments: Iterable[Document],
    *,
    project: str | None = None,
    session_id: str | None = None,
) -> list[Document]:
    """Of ``fragments``, the confirmed live decisions about code the request names (a
    decision is about the code names it writes and the files its turn changed, other than
    the project's own names: ``derive.names.of_project``), at most ``DECISIONS_TOLD``:
    those naming the most of it first, then the newest. Never one the asking session made.
    A long request (a build log) weighs a decision's name no more than its hundreds of
    other words, so the relevance floor misses what naming it says."""
    return named_among(request, in_force(fragments, project), session_id)


def in_force(
    fragments: Iterable[Document], project: str | None
) -> list[tuple[Document, tuple[str, ...]]]:
    """The confirmed live decisions among ``fragments``, each with what it is about: the code
    names it writes and the files the turn it was made in changed (by the names
    ``derive.names.file_names`` gives). What ``decisions_named`` reads of a project's
    decisions whatever the request, so a caller that keeps them works it out once."""
    found = []
    for document in fragments:
        meta = document.meta
        if (
            DECISION_TAG not in (meta.get("tags") or [])
            or not confirmed(meta.get("confidence"))
            or retired_mark(document.summary) is not None
        ):
            continue
        written = code_names(document.summary)
        # A file its sentence names already (``SecureTempFileHelper`` and its ``.cs``) is
        # one thing it is about, not two: a request naming it counts once.
        stems = {n.casefold() for n in written}
        # What it chooses in plain words ("use a mock filesystem", ``USE "uv pip"``); a
        # choice written as code is among its code names already.
        chosen = [n for n in chosen_names(document.summary) if not code_names(n)]
        changed = [
            n
            for path in files_in(facts_from(document.body))
            for n in file_names(path)
            if n.rsplit("/", 1)[-1].split(".", 1)[0].casefold() not in stems
        ]
        # The project's own names (``BlastMerge.Core``) are in every build log.
        about = tuple(
            n
            for n in dict.fromkeys([*written, *chosen, *changed])
            if not (project and of_project(n, project))
        )
        if about:
            found.append((document, about))
    return found


def named_among(
    request: str,
    decisions: Sequence[tuple[Document, tuple[str, ...]]],
    session_id: str | None = None,
    common: Callable[[str], bool] | None = None,
) -> list[Document]:
    """Of ``decisions`` (``in_force``), those the request names, as ``decisions_named``
    tells them: never one the asking session made. ``common`` tells which of the plain
    words a decision chose (``derive.names.plain_word``) are too common where it is asked
    to say what a request is about ("use caching"): those name nothing."""
    if not decisions:
        return []
    names = Names(request, parts=True)
    found = []
    for document, about in decisions:
        if session_id and session_id in drawn_from(document):
            continue
        named = sum(
            names.names(name) and not (common and plain_word(name) and common(name))
            for name in about
        )
        if named:
            found.append((named, document.updated_at, document))
    found.sort(key=lambda item: item[:2], reverse=True)
    return [document for _, _, document in found[:DECISIONS_TOLD]]


@dataclass(eq=False)
class Decisions:
    """Each project's decisions in force (``in_force``) of its newest ``DECISIONS_READ``
    decision fragments, read again only when its fragments changed (``Store.kind_stamp``):
    every prompt asks for them, and a project's decisions change far more rarely than it
    asks. ``common``: which plain words a decision chose are too common to name it
    (``named_among``)."""

    store: Store
    common: Callable[[str], bool] | None = None
    _kept: dict[str, tuple[KindStamp, list[tuple[Document, tuple[str, ...]]]]] = field(
        default_factory=dict, init=False, repr=False
    )

    def named(
        self,
        request: str,
        project: str | None,
        session_id: str | None,
        shown: set[tuple[str, str]],
    ) -> list[Hit]:
        """The project's confirmed decisions about what the request names
        (``decisions_named``) but those ``shown`` (kind, key), as hits to go first in a
        block: its budget keeps them."""
        if project is None:
            return []
        kept = [d for d in self.of(project) if (d[0].kind, d[0].key) not in shown]
        named = named_among(request, kept, session_id, self.common)
        return [Hit(document, 1.0, 0.0, document.importance, 0.0) for document in named]

    def of(self, project: str) -> list[tuple[Document, tuple[str, ...]]]:
        """The project's decisions in force, each with what it is about."""
        stamp = self.store.kind_stamp("fragment", project)
        kept = self._kept.get(project)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        found = in_force(decisions(self.store, project, DECISIONS_READ), project)
        self._kept[project] = (stamp, found)
        return found


# Observations a search finds but no block tells of: a turn's end (its answer was the
# reply before it) and a tool about to run (its result follows). Bookkeeping neither finds.
_UNTOLD_HOOKS = frozenset({"stop", "pre_tool_use"})


def tellable_observation(document: Document, session_id: str | None) -> bool:
    """Whether an observation belongs in another block: not the asking session's own (its
    prompt, its steps), not bookkeeping (the host's own tool calls among it)."""
    if session_id and document.session_id == session_id:
        return False
    hook = document.meta.get("hookType")
    return not bookkeeping_observation(document.meta.get("type"), hook) and (
        hook not in _UNTOLD_HOOKS
    )


def tellable_summary(
    document: Document, own_row: str | None, session_id: str | None = None
) -> bool:
    """Whether a board row or a session belongs in a block: not the asking session's own,
    and not a placeholder (an idle row nobody described yet, in any language)."""
    if document.kind == "session":
        return document.key != session_id
    if own_row and document.key == own_row:
        return False
    return not placeholder_row(document)
