"""What the index keeps of each kind of memory: observations, fragments, session summaries.

Each builder turns one source into a ``DocumentDraft``: readable fields for results, the
analyzed terms that match, the text that gets a vector, and the ids of the events it came
from (client ids where the host sent them, ``evt_<seq>`` otherwise), the primary one first.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Sequence
from typing import Any

from memvault.analyzer import tokens
from memvault.domain import BoardRow, DocumentDraft, Observation, parse_timestamp
from memvault.vault.fragments import Fragment
from memvault.vault.remember import facts_from

SUMMARY_LIMIT = 240
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


def observation_text(observation: Observation) -> str:
    """What an observation says, once: the narrative, or the title when there is none."""
    narrative = observation.narrative.strip()
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
    observation: Observation, project: str, context: Sequence[Observation] = ()
) -> DocumentDraft:
    """An observation, with the text of its neighbouring events as context."""
    text = observation_text(observation)
    around = "\n".join(observation_text(other) for other in context)
    return DocumentDraft(
        kind="observation",
        key=observation.id,
        title=observation.title,
        summary=_clip(observation.narrative or observation.title, SUMMARY_LIMIT),
        body=text,
        terms=("", terms(text), terms(around), date_terms(observation.occurred_at)),
        embed_text=text,
        importance=min(max(observation.importance / OBSERVATION_IMPORTANCE_SCALE, 0.0), 1.0),
        updated_at=observation.occurred_at,
        content_hash=content_hash(text, around, observation.importance, observation.updated_at),
        project=project,
        session_id=observation.session_id,
        event_ids=(event_id(observation),),
        meta=_observation_meta(observation),
    )


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
        embed_text=f"{summary}\n{body}",
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
) -> DocumentDraft:
    """A board session: its row (topic, summary, keywords) and its snapshot's text."""
    text = "\n".join(part for part in (row.summary, snapshot or "") if part.strip())
    return DocumentDraft(
        kind="summary",
        key=row.session_id,
        title=row.topic or row.session_id,
        summary=_clip(row.summary, SUMMARY_LIMIT),
        body=text,
        terms=(
            terms(row.topic),
            terms(text),
            terms(row.keywords),
            date_terms(_board_time(row.updated_at or row.started_at)),
        ),
        embed_text=f"{row.topic}\n{row.summary}\n{row.keywords}",
        importance=SUMMARY_IMPORTANCE,
        updated_at=_board_time(row.updated_at or row.started_at),
        content_hash=content_hash(row, snapshot, project, list(event_ids)),
        project=project,
        session_id=row.session_id,
        path=path,
        event_ids=tuple(event_ids),
        mtime=mtime,
        meta={"status": row.status, "agent": row.agent_name, "keywords": row.keywords},
    )


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
