"""What the index keeps of each kind of memory: observations, fragments, session summaries.

Each builder turns one source into a ``DocumentDraft``: readable fields for results, the
analyzed terms that match, the text that gets a vector, and the ids of the events it came
from (client ids where the host sent them, ``evt_<seq>`` otherwise), the primary one first.
The text that gets a vector is the head of what the document says, about one window of
the model (``embeddings.window``); the terms hold it whole.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import re
from collections.abc import Iterable, Sequence
from typing import Any

from memvault.analyzer import kept_tokens, tokens
from memvault.derive.digest import Digest
from memvault.derive.quoted import asked
from memvault.derive.supersede import DECISION_TAG
from memvault.derive.text import plain_line
from memvault.domain import (
    BoardRow,
    Document,
    DocumentDraft,
    Observation,
    Session,
    parse_timestamp,
)
from memvault.embeddings.window import head
from memvault.ingest.envelope import NO_WORK_HOOKS
from memvault.language import placeholder_summaries, placeholder_topics
from memvault.store import SearchIndex
from memvault.vault.fragments import Fragment
from memvault.vault.remember import facts_from

SUMMARY_LIMIT = 240
# A project's newest decision fragments read at once: those a new decision may replace, and
# those a request may name (``decisions``).
DECISIONS_READ = 500
TITLE_LIMIT = 80
SESSION_FILES = 10  # files a session's result lists
DECISION_LIMIT = 300  # characters of a decision a session's document keeps to show
SESSION_REQUESTS = 40  # requests a session's result lists
# A session's bookkeeping (``NO_WORK_HOOKS``: starting and ending, compaction, the host's
# notices, memvault's record of what it gave an agent; with the host's own tools, ``type``
# host_internal, and an idle board row nobody described: ``is_bookkeeping``) is kept among
# the session's documents, but with no words in the index and no vector: a search never
# finds it, and a store of thousands of sessions, each with a notice holding a request's
# words, cannot crowd the work out of its candidates. Stores from before: migration 0019.
# Hooks whose observations get no vector (see ``embedded``): bookkeeping, and tool calls.
UNEMBEDDED_HOOKS = NO_WORK_HOOKS | {"pre_tool_use", "post_tool_use"}
OBSERVATION_IMPORTANCE_SCALE = 10  # observations rate importance 1–10
SUMMARY_IMPORTANCE = 0.6  # a session summary has none of its own
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_ACTOR = re.compile(r"^([A-Z][\w'’.-]{0,30}(?: [A-Z][\w'’.-]{0,30}){0,2}): \S")


def terms(text: str) -> str:
    return " ".join(tokens(text))


def date_terms(timestamp: str) -> str:
    """A day in words, ``8 May 2023 May 2023``: questions name days, months and years."""
    parsed = parse_timestamp(timestamp) if timestamp else None
    if parsed is None:
        return ""
    month = _MONTHS[parsed.month - 1]
    return terms(f"{parsed.day} {month} {parsed.year} {month} {parsed.year}")


def actor(text: str) -> str | None:
    """Who speaks in a transcript-style line, ``Name: what they said``."""
    match = _ACTOR.match(text)
    return match[1] if match else None


def content_hash(*parts: object) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        digest.update(repr(part).encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()


def event_id(observation: Observation) -> str:
    return observation.client_event_id or f"evt_{observation.event_seq}"


def observation_text(observation: Observation, whole: str | None = None) -> str:
    """What an observation says, once: the narrative (or ``whole``, the event's whole text
    it was clipped from), or the title when there is none."""
    narrative = (whole or observation.narrative).strip()
    parts = [narrative or observation.title]
    if narrative and not _echoes(observation.title, narrative):
        parts.insert(0, observation.title)
    parts += observation.facts
    parts += observation.files
    return "\n".join(part for part in parts if part)


def _echoes(title: str, narrative: str) -> bool:
    """Titles like ``Prompt: <text>`` repeat the narrative; indexing them twice would
    count every word twice."""
    head = title.split(": ", 1)[-1].rstrip("…").strip()
    return bool(head) and narrative.startswith(head)


def observation_document(
    observation: Observation,
    project: str,
    context: Sequence[Observation] = (),
    *,
    whole: str | None = None,
) -> DocumentDraft:
    """An observation, with the text of its neighbouring events as context, unless it says
    nothing of its own (a result reading only "Turn ended" answers no search). ``whole``:
    the event's whole text, which search reads instead of the clipped narrative."""
    text = observation_text(observation, whole)
    # A neighbour that is bookkeeping lends no words either: a notice between two tool
    # calls would otherwise be found through them.
    told = [other for other in context if not bookkeeping_observation(other.type, other.hook_type)]
    neighbours = [] if says_nothing(observation) else [observation_text(o) for o in told]
    around = "\n".join(neighbours)
    draft = DocumentDraft(
        kind="observation",
        key=observation.id,
        title=observation.title,
        # The line an agent is told: the event's words, its longer code said as "…".
        summary=_clip(plain_line(_told(observation, whole)) or observation.title, SUMMARY_LIMIT),
        body=text,
        # Each event's text is its neighbours' context too: analyzed once, kept for them.
        terms=(
            "",
            joined_terms([text]),
            joined_terms(neighbours),
            date_terms(observation.occurred_at),
        ),
        embed_text=head(observation_text(observation)) if embedded(observation) else "",
        importance=min(max(observation.importance / OBSERVATION_IMPORTANCE_SCALE, 0.0), 1.0),
        updated_at=observation.occurred_at,
        content_hash=content_hash(text, around, observation.importance, observation.updated_at),
        project=project,
        session_id=observation.session_id,
        event_ids=(event_id(observation),),
        meta=_observation_meta(observation),
    )
    return unsearched(draft) if is_bookkeeping(draft) else draft


def is_bookkeeping(document: Document | DocumentDraft) -> bool:
    """Whether a document records a session's bookkeeping rather than its work: a session
    starting or ending, a notification, compaction, the host's own tools, what memvault
    gave an agent, an idle board row nobody described yet."""
    if document.kind == "observation":
        return bookkeeping_observation(document.meta.get("type"), document.meta.get("hookType"))
    return document.kind == "summary" and placeholder_row(document)


def bookkeeping_observation(kind: str | None, hook_type: str | None) -> bool:
    """Whether an observation of this type and hook is bookkeeping: the host's own tools
    (``host_internal``) or a hook that carries no work (``NO_WORK_HOOKS``)."""
    return kind == "host_internal" or hook_type in NO_WORK_HOOKS


def placeholder_row(document: Document | DocumentDraft) -> bool:
    """Whether a board row's document is a placeholder: an idle row nobody described yet
    (its topic and summary are the registration's own, in any language)."""
    if document.meta.get("status") != "idle":
        return False
    topic = document.title.strip()
    unset = topic in placeholder_topics() or topic.lower() == "untitled" or topic == document.key
    return unset or document.summary.strip() in placeholder_summaries()


def unsearched(draft: DocumentDraft) -> DocumentDraft:
    """``draft`` with no words for the index and nothing to embed."""
    return dataclasses.replace(
        draft,
        terms=("", "", "", ""),
        embed_text="",
        content_hash=content_hash(draft.content_hash, "unsearched"),
    )


def _told(observation: Observation, whole: str | None) -> str:
    """An event's text as its line tells it: a request by what it asks (``asked``)."""
    text = whole or observation.narrative
    return asked(text) if observation.hook_type == "prompt_submit" else text


def says_nothing(observation: Observation) -> bool:
    """Whether an observation holds nothing but its title: a turn's end with no text."""
    return not (observation.narrative.strip() or observation.facts or observation.files)


def embedded(observation: Observation) -> bool:
    """Whether an observation gets a vector: what people said, and what failed. A tool's
    call is found by its words (its file, its command) and through its session's vector;
    embedding every tool call made a real history's backlog hours long (docs/benchmarks.md)."""
    return (
        observation.hook_type not in UNEMBEDDED_HOOKS
        and observation.type != "host_internal"
        and not says_nothing(observation)
    )


def session_document(
    session: Session, digest: Digest, *, project: str | None = None
) -> DocumentDraft:
    """A host session as one retrieval unit, as a plain BM25 over whole sessions reads it:
    its requests, decisions and replies are what it says; the files it touched, the
    commands it ran and what it searched for are the context that finds it. It is weighed
    among sessions only (``store.LEXICAL_PARTS``), so its length is a session's."""
    title = _one_line(session.title or (digest.requests[0] if digest.requests else ""))
    title = _clip(title, TITLE_LIMIT) or session.id
    said = "\n".join([*digest.requests, *digest.decisions, *digest.replies])
    around = "\n".join([*digest.files, *digest.commands, *digest.targets])
    body = _session_body(digest)
    first = digest.requests[0] if digest.requests else title
    return DocumentDraft(
        kind="session",
        key=session.id,
        title=title,
        summary=_clip(first, SUMMARY_LIMIT),
        body=body,
        terms=(terms(title), _said_terms(digest), terms(around), date_terms(digest.first_at)),
        embed_text=head(_one_line("\n".join([title, *digest.requests, *digest.decisions]))),
        importance=SUMMARY_IMPORTANCE,
        updated_at=digest.last_at or session.created_at,
        content_hash=content_hash(title, said, around, project, digest.event_ids),
        project=project if project is not None else session.project,
        session_id=session.id,
        event_ids=tuple(digest.event_ids),
        meta={
            "files": digest.files[:SESSION_FILES],
            "decisions": [_clip(_one_line(d), DECISION_LIMIT) for d in digest.decisions],
            "board": session.board_session_id,
            "requests": len(digest.requests),
        },
    )


def _said_terms(digest: Digest) -> str:
    """The analyzed words of a session's requests, decisions and replies: each text's own,
    joined (no word spans two texts, so it is what the whole would analyze to). A live
    session's document is made again as its events come, and all but its newest texts
    were analyzed the time before (a session of 300,000 characters took 90 ms a time)."""
    return joined_terms([*digest.requests, *digest.decisions, *digest.replies])


def joined_terms(pieces: Iterable[str]) -> str:
    """``terms("\n".join(pieces))``, from each piece's kept terms (``kept_tokens``): no
    word spans two texts, and a text read again (a neighbour's, a session's earlier
    request) is not analyzed again."""
    return " ".join(" ".join(said) for piece in pieces if (said := kept_tokens(piece)))


def _session_body(digest: Digest) -> str:
    """What a person reads of a session found: its requests, decisions, files, commands."""
    parts = []
    for heading, items in (
        ("Requests", digest.requests[:SESSION_REQUESTS]),
        ("Decisions", digest.decisions),
        ("Files", digest.files[:SESSION_FILES]),
        ("Commands", digest.commands[:SESSION_FILES]),
    ):
        if items:
            listed = "\n".join(f"- {_clip(_one_line(item), 300)}" for item in items)
            parts.append(f"{heading}:\n{listed}")
    return "\n\n".join(parts)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def fragment_document(
    fragment: Fragment,
    key: str,
    *,
    archived: bool,
    mtime: float | None,
    modified: str,
) -> DocumentDraft:
    """A fragment file: its summary and tags are what L0 shows, its facts what L1 reads.
    ``key`` is its path relative to the vault; ``modified`` its file time (ISO)."""
    props = fragment.properties
    facts = facts_from(fragment.body)
    day = _day(props.get("date"))
    summary = str(props.get("summary") or (facts[0] if facts else "")).strip()
    title = key.rsplit("/", 1)[-1].removesuffix(".md")
    tags = _strings(props.get("tags"))
    body = "\n".join(facts)
    return DocumentDraft(
        kind="fragment",
        key=key,
        title=title,
        summary=_clip(summary, SUMMARY_LIMIT),
        body=fragment.body.strip(),
        terms=(
            terms(f"{title}\n{summary}"),
            terms(body),
            terms(" ".join(tags)),
            date_terms(day or modified),
        ),
        embed_text=head(f"{summary}\n{body}"),
        importance=_unit(props.get("importance"), 0.5),
        updated_at=day or modified,
        content_hash=content_hash(props, fragment.body),
        project=str(props.get("project") or "").strip() or None,
        path=key,
        event_ids=tuple(_strings(props.get("events"))),
        archived=archived,
        mtime=mtime,
        meta={
            "tags": tags,
            "date": day,
            "confidence": _unit(props.get("confidence"), None),
            "source": props.get("source"),
            "sources": _strings(props.get("sources")),
        },
    )


def summary_document(
    row: BoardRow,
    *,
    snapshot: str | None,
    path: str,
    project: str | None,
    event_ids: Sequence[str],
    mtime: float | None,
    worked_at: str | None = None,
) -> DocumentDraft:
    """A board session: its row (topic, summary, keywords) and its snapshot's text. It is
    dated, as the session's other memory is, by the day of its host session's last event
    (``worked_at``); a row no host session is tied to, by its Updated At. A history sent
    or imported today registers its rows today: by their rows, its summaries would all
    rank as fresh, above the events, fragments and sessions they summarize."""
    text = "\n".join(part for part in (row.summary, snapshot or "") if part.strip())
    dated = _day(worked_at) or _board_time(row.updated_at or row.started_at)
    draft = DocumentDraft(
        kind="summary",
        key=row.session_id,
        title=row.topic or row.session_id,
        summary=_clip(row.summary, SUMMARY_LIMIT),
        body=text,
        terms=(
            terms(row.topic),
            terms(text),
            terms(row.keywords),
            date_terms(dated),
        ),
        embed_text=head(f"{row.topic}\n{row.summary}\n{row.keywords}"),
        importance=SUMMARY_IMPORTANCE,
        updated_at=dated,
        content_hash=content_hash(row, snapshot, project, list(event_ids), dated),
        project=project,
        session_id=row.session_id,
        path=path,
        event_ids=tuple(event_ids),
        mtime=mtime,
        meta={"status": row.status, "agent": row.agent_name, "keywords": row.keywords},
    )
    return unsearched(draft) if is_bookkeeping(draft) else draft


def _observation_meta(observation: Observation) -> dict[str, Any]:
    meta: dict[str, Any] = {"type": observation.type, "hookType": observation.hook_type}
    speaker = actor(observation.narrative)
    if speaker:
        meta["actor"] = speaker
        meta["actorTerms"] = tokens(speaker)
    return meta


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _strings(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(item) for item in value if item is not None]
    if isinstance(value, str) and value.strip():
        return [part.strip() for part in value.split(",") if part.strip()]
    return []


def _unit(value: Any, default: float | None) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return min(max(float(value), 0.0), 1.0)


def _day(value: Any) -> str | None:
    if isinstance(value, dt.datetime):
        value = value.date()
    if isinstance(value, dt.date):
        return f"{value.isoformat()}T00:00:00.000Z"
    if isinstance(value, str):
        try:
            return f"{dt.date.fromisoformat(value.strip()[:10]).isoformat()}T00:00:00.000Z"
        except ValueError:
            return None
    return None


def _board_time(value: str) -> str:
    """Board times are local ``YYYY-MM-DD HH:MM``; recency needs only the day."""
    return _day(value) or "1970-01-01T00:00:00.000Z"


def decisions(index: SearchIndex, project: str, limit: int = DECISIONS_READ) -> list[Document]:
    """The project's newest ``limit`` decision fragments, found by their tag, so a long
    history's other fragments do not push its decisions out of reach (the filter finds the
    tag's string anywhere in a document's meta: its tags are read again here)."""
    found = index.list_documents("fragment", project=project, limit=limit, meta_holds=DECISION_TAG)
    return [d for d in found if DECISION_TAG in (d.meta.get("tags") or [])]
