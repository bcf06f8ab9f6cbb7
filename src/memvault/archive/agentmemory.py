"""agentmemory's export (``GET /agentmemory/export``, its ``ExportData``), imported.

- ``sessions[]`` become sessions (id, project, cwd, agent).
- ``rawEvents{sessionId: RawObservation[]}`` (the Cursor fork's, when exported with raw
  events) become events through the observe path, each with its ``eventId`` (or its id),
  so importing again adds nothing.
- ``memories[]`` become fragments through the fragment write path: the title (or the
  content's first sentence) is the summary, the content's lines the facts, the type and
  concepts tags, the files ``file:`` facts; ``source`` is ``agentmemory:<id>``, which is
  how a second import knows it has the memory already.
- ``observations`` and ``summaries`` are derived data. memvault derives its own from raw
  events; without raw events they cannot be derived faithfully, and they are counted as
  skipped with that reason. Every other collection (graph, lessons, actions…) is counted as
  skipped too: memvault does not keep them.
"""

from __future__ import annotations

import re
from typing import Any

from memvault.archive.format import ArchiveError
from memvault.archive.report import At, ImportReport
from memvault.archive.restore import Restore
from memvault.domain import parse_timestamp, utc_now
from memvault.errors import InvalidInput
from memvault.memory import Memory
from memvault.vault.remember import Draft, facts_from

OLDEST = (0, 3, 0)
NEWEST = (0, 9, 29)
DEFAULT_PROJECT = "general"
# What the top level holds besides collections.
_META = frozenset({"version", "exportedAt", "pagination"})
_TAKEN = frozenset({"sessions", "rawEvents", "memories", "observations", "summaries"})
_EVENT_FIELDS = ("toolName", "toolInput", "toolOutput", "userPrompt", "assistantResponse")
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_WIKILINK = re.compile(r"\[\[([^\]|\n]+)(?:\|([^\]\n]+))?\]\]")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s")
_TAG_UNSAFE = re.compile(r"[^\w/-]+")


def is_export_data(value: Any) -> bool:
    """Whether a decoded JSON document means to be agentmemory's ``ExportData`` (``check``
    says whether it is one memvault reads)."""
    return isinstance(value, dict) and any(
        key in value for key in ("version", "sessions", "memories", "observations")
    )


def check(data: Any) -> str:
    """The export's version, if it is an ``ExportData`` memvault reads; else
    ``ArchiveError`` naming the problem (nothing is written then)."""
    if not isinstance(data, dict):
        raise ArchiveError("exportData must be a JSON object (agentmemory's ExportData)")
    version = data.get("version")
    if not isinstance(version, str):
        raise ArchiveError("exportData.version is required: agentmemory's version, a string")
    match = _VERSION.fullmatch(version.strip())
    parsed = tuple(int(n) for n in match.groups()) if match else None
    if parsed is None or not OLDEST <= parsed <= NEWEST:
        raise ArchiveError(
            f"unsupported agentmemory export version {version!r}: memvault reads exports of "
            "agentmemory 0.3.0 to 0.9.29"
        )
    for name, kind in (
        ("sessions", list),
        ("memories", list),
        ("summaries", list),
        ("observations", dict),
        ("rawEvents", dict),
    ):
        if data.get(name) is not None and not isinstance(data[name], kind):
            shape = "a list" if kind is list else "an object"
            raise ArchiveError(f"exportData.{name} must be {shape}")
    return version.strip()


def import_export_data(memory: Memory, data: Any, *, strategy: str = "merge") -> ImportReport:
    version = check(data)
    restore = Restore(memory, strategy=strategy, source="agentmemory", version=version)
    report = restore.report
    places = _sessions(restore, data.get("sessions") or [])
    raw: dict[str, Any] = data.get("rawEvents") or {}
    for session_id, events in raw.items():
        _events(restore, session_id, events, places)
    restore.flush()
    for index, item in enumerate(data.get("memories") or []):
        _memory(restore, item, places, At(item=f"memories[{index}]"))
    with_raw = {sid for sid, events in raw.items() if isinstance(events, list) and events}
    for session_id, observations in (data.get("observations") or {}).items():
        if isinstance(observations, list) and observations:
            report.skip("observation", _derived(session_id in with_raw), len(observations))
    for summary in data.get("summaries") or []:
        session_id = summary.get("sessionId") if isinstance(summary, dict) else None
        report.skip("summary", _derived(session_id in with_raw))
    for name, value in data.items():
        if name in _META or name in _TAKEN or not isinstance(value, list | dict) or not value:
            continue
        report.skip(name, "not kept by memvault", len(value))
    return restore.finish()


def _derived(has_raw_events: bool) -> str:
    if has_raw_events:
        return "derived again by memvault from the session's raw events"
    return "no raw events to derive it from (export from agentmemory with raw events)"


def _sessions(restore: Restore, sessions: list[Any]) -> dict[str, tuple[str, str, str | None]]:
    """Import the sessions; each one's (project, cwd, agent) by id, for its events."""
    places: dict[str, tuple[str, str, str | None]] = {}
    for index, item in enumerate(sessions):
        at = At(item=f"sessions[{index}]")
        if not isinstance(item, dict):
            restore.report.refuse("session", "a session must be an object", at)
            continue
        record = {
            "id": item.get("id"),
            "project": item.get("project"),
            "cwd": item.get("cwd"),
            "agentId": item.get("agentId"),
            "title": item.get("title") if isinstance(item.get("title"), str) else None,
        }
        restore.session(record, at)
        if all(isinstance(record[k], str) and record[k] for k in ("id", "project", "cwd")):
            agent = record["agentId"] if isinstance(record["agentId"], str) else None
            places[record["id"]] = (record["project"], record["cwd"], agent)
    return places


def _events(
    restore: Restore,
    session_id: str,
    events: Any,
    places: dict[str, tuple[str, str, str | None]],
) -> None:
    if not isinstance(events, list):
        restore.report.refuse("event", "must be a list", At(item=f"rawEvents[{session_id}]"))
        return
    place = places.get(session_id)
    for index, item in enumerate(events):
        at = At(item=f"rawEvents[{session_id}][{index}]")
        if not isinstance(item, dict):
            restore.report.refuse("event", "a raw event must be an object", at)
            continue
        if place is None:
            restore.report.refuse(
                "event", f"session {session_id} is not in the export's sessions: no project", at
            )
            continue
        event_id = item.get("eventId") or item.get("id")
        if not isinstance(event_id, str) or not event_id:
            restore.report.refuse("event", "a raw event needs its id", at)
            continue
        project, cwd, agent = place
        raw = item.get("raw")
        data = raw if raw is not None else {k: item[k] for k in _EVENT_FIELDS if k in item}
        restore.event(
            {
                "hookType": item.get("hookType"),
                "sessionId": session_id,
                "eventId": event_id,
                "project": project,
                "cwd": cwd,
                "agentId": item.get("agentId") or agent,
                "timestamp": item.get("timestamp"),
                "data": data,
            },
            at,
        )


def _memory(
    restore: Restore,
    item: Any,
    places: dict[str, tuple[str, str, str | None]],
    at: At,
) -> None:
    report = restore.report
    if not isinstance(item, dict) or not isinstance(item.get("id"), str):
        report.refuse("memory", "a memory must be an object with an id", at)
        return
    if item.get("isLatest") is False:
        report.skip("memory", "superseded by a newer version")
        return
    forget_after = item.get("forgetAfter")
    expiry = parse_timestamp(forget_after) if isinstance(forget_after, str) else None
    if expiry is not None and expiry < utc_now():
        report.skip("memory", "past its forgetAfter time")
        return
    draft = memory_draft(item, places)
    if draft.source in restore.files.sources():
        report.count("memory", "existing")
        return
    # skip writes only what is missing: a new fragment, never a merge into an existing one.
    threshold = 1.0 if restore.strategy == "skip" else None
    try:
        done = restore.memory.fragments.remember(draft, threshold=threshold)
    except InvalidInput as exc:
        report.refuse("memory", exc.message, at)
        return
    restore.files.sources().add(str(draft.source))
    report.count("memory", "merged" if done.action == "merged" else "new")


def memory_draft(item: dict[str, Any], places: dict[str, tuple[str, str, str | None]]) -> Draft:
    """An agentmemory ``Memory`` as a fragment draft."""
    content = _plain(str(item.get("content") or ""))
    title = " ".join(_plain(str(item.get("title") or "")).split())
    summary = title or _first_sentence(content)
    facts = [fact for fact in facts_from(content) if fact.strip()]
    files = [str(f) for f in item.get("files") or [] if isinstance(f, str) and f.strip()]
    facts += [f"file: {path}" for path in files]
    if not facts and summary:
        facts = [summary]
    tags = [_tag(str(item.get("type") or ""))]
    tags += [_tag(str(c)) for c in item.get("concepts") or [] if isinstance(c, str)]
    created = item.get("createdAt")
    when = parse_timestamp(created) if isinstance(created, str) else None
    return Draft(
        project=_project(item, places),
        summary=summary,
        facts=facts,
        source=f"agentmemory:{item['id']}",
        tags=list(dict.fromkeys(t for t in tags if t and not t.isdigit())),
        date=when.date().isoformat() if when is not None else None,
    )


def _project(item: dict[str, Any], places: dict[str, tuple[str, str, str | None]]) -> str:
    """The memory's project, else its first known session's, else ``general``."""
    project = item.get("project")
    if isinstance(project, str) and project.strip():
        return project.strip()
    for session_id in item.get("sessionIds") or []:
        if isinstance(session_id, str) and session_id in places:
            return places[session_id][0]
    return DEFAULT_PROJECT


def _plain(text: str) -> str:
    """Text without wikilinks (fragments are plain text): ``[[a|b]]`` → ``b``."""
    return _WIKILINK.sub(lambda m: m.group(2) or m.group(1), text)


def _first_sentence(text: str) -> str:
    for line in text.strip().splitlines():
        line = line.strip().lstrip("-*# ").strip()
        if line:
            return _SENTENCE.split(line, maxsplit=1)[0][:300]
    return ""


def _tag(text: str) -> str:
    return _TAG_UNSAFE.sub("-", text.strip().lower()).strip("-")
