"""Recorded conversations as observe envelopes, shaped the way the host adapters send them:
prompts, final assistant text and tool outcomes kept; thinking, progress lines, local
slash-command chatter and interruption markers skipped."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

_SKIPPED_PROMPT = re.compile(r"^\s*(?:<local-command|<command-name>|\[Request interrupted)")
_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.DOTALL)
_STAMP = re.compile(r"<timestamp>(.*?)</timestamp>")


def claude_code(path: Path) -> list[dict]:
    """A Claude Code ``~/.claude/projects/<slug>/<session>.jsonl`` as envelopes."""
    envelopes: list[dict] = []
    pending: dict[str, dict] = {}
    for number, line in enumerate(path.read_text().splitlines()):
        record = json.loads(line)
        message = record.get("message") or {}
        if record.get("type") not in ("user", "assistant") or record.get("isCompactSummary"):
            continue
        base = {
            "sessionId": record["sessionId"],
            "project": Path(record["cwd"]).name,
            "cwd": record["cwd"],
            "timestamp": record["timestamp"],
        }
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for index, block in enumerate(blocks or []):
            event = {**base, "eventId": f"{record.get('uuid', number)}:{index}"}
            kind = block.get("type")
            if kind == "text" and block["text"].strip():
                if record["type"] == "assistant":
                    envelopes.append(
                        {
                            **event,
                            "hookType": "assistant_response",
                            "data": {"assistantResponse": block["text"].strip()},
                        }
                    )
                elif not _SKIPPED_PROMPT.match(block["text"]):
                    envelopes.append(
                        {**event, "hookType": "prompt_submit", "data": {"prompt": block["text"]}}
                    )
            elif kind == "tool_use":
                pending[block["id"]] = block
            elif kind == "tool_result" and block["tool_use_id"] in pending:
                use = pending.pop(block["tool_use_id"])
                data: dict[str, Any] = {"tool_name": use["name"], "tool_input": use["input"]}
                output = _text(block.get("content"))
                if block.get("is_error"):
                    envelopes.append(
                        {
                            **event,
                            "hookType": "post_tool_failure",
                            "data": {**data, "error": output},
                        }
                    )
                else:
                    envelopes.append(
                        {
                            **event,
                            "hookType": "post_tool_use",
                            "data": {**data, "tool_output": output},
                        }
                    )
    return envelopes


def cursor(path: Path, *, cwd: str) -> list[dict]:
    """A Cursor ``agent-transcripts/<id>/<id>.jsonl`` as envelopes. Its lines carry no
    times, so each event is a second after the last prompt's ``<timestamp>``."""
    session = path.stem
    base = {"sessionId": session, "project": Path(cwd).name, "cwd": cwd}
    clock = datetime(2026, 1, 1, tzinfo=UTC)
    envelopes: list[dict] = []

    def add(hook: str, number: int, index: int, data: dict) -> None:
        nonlocal clock
        clock += timedelta(seconds=1)
        envelopes.append(
            {
                **base,
                "hookType": hook,
                "eventId": f"{session}:{number}:{index}",
                "timestamp": clock.isoformat().replace("+00:00", "Z"),
                "data": data,
            }
        )

    for number, line in enumerate(path.read_text().splitlines()):
        record = json.loads(line)
        blocks = (record.get("message") or {}).get("content") or []
        for index, block in enumerate(blocks):
            if block.get("type") == "text" and record["role"] == "user":
                stamp = _STAMP.search(block["text"])
                if stamp:
                    clock = _cursor_time(stamp.group(1))
                query = _QUERY.search(block["text"])
                add("prompt_submit", number, index, {"prompt": query.group(1) if query else ""})
            elif block.get("type") == "text":
                add("assistant_response", number, index, {"text": block["text"]})
            elif block.get("type") == "tool_use":
                add(
                    "post_tool_use",
                    number,
                    index,
                    {"tool_name": block["name"], "tool_input": block["input"]},
                )
    return envelopes


def _cursor_time(text: str) -> datetime:
    """``Tuesday, Sep 29, 2026, 2:29 AM (UTC-4)`` as a UTC time."""
    match = re.fullmatch(r"(.*) \(UTC([+-]\d+)\)", text.strip())
    assert match, text
    local = datetime.strptime(match.group(1), "%A, %b %d, %Y, %I:%M %p")
    return (local - timedelta(hours=int(match.group(2)))).replace(tzinfo=UTC)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""
