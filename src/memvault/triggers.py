"""Trigger phrases: which session-board operation a user's prompt asks for.

Phrases come in Chinese (traditional or simplified script) and English, with a Session ID
where the operation needs one. More specific phrases are tried first, so
``解除引用 memory <id>`` (release) is never read as ``引用 memory <id>`` (continue), and
``整理這個 session`` (update this session) never as ``整理 memory`` (organize).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_ID = r"(?P<id>\d{4}-\d{2}-\d{2}-\d{4}-[a-z0-9][a-z0-9-]*)"
_S = r"\s*"

# Simplified → traditional, for the characters the phrases use.
_TO_TRADITIONAL = str.maketrans("注册补动续状态这个", "註冊補動續狀態這個")

_PHRASES: tuple[tuple[str, str], ...] = (
    ("release", rf"解除引用{_S}memory{_S}{_ID}"),
    ("release", rf"解除{_S}memory{_S}引用{_S}{_ID}"),
    ("release", rf"release\s+memory\s+reference\s+{_ID}"),
    ("archive", rf"封存{_S}memory{_S}session{_S}{_ID}"),
    ("archive", rf"archive\s+memory\s+session\s+{_ID}"),
    ("continue", rf"接續{_S}memory{_S}(?:session{_S})?{_ID}"),
    ("continue", rf"(?:引用|沿用){_S}memory{_S}{_ID}"),
    ("continue", rf"continue\s+(?:from\s+)?memory\s+(?:session\s+)?{_ID}"),
    ("register", rf"(?:手動|補)?註冊{_S}memory(?:{_S}session)?"),
    ("register", r"register\s+(?:a\s+)?memory\s+session"),
    ("update", rf"memory{_S}session{_S}狀態更新"),
    ("update", rf"更新{_S}memory{_S}(?:session|狀態)"),
    ("update", rf"整理這個{_S}session"),
    ("update", r"狀態更新"),
    ("update", r"update\s+(?:the\s+)?memory\s+session"),
    ("organize", rf"(?:整理|清理){_S}memory"),
    ("organize", r"(?:organi[sz]e|clean\s*up)\s+memory"),
)
_COMPILED = tuple((op, re.compile(pattern, re.IGNORECASE)) for op, pattern in _PHRASES)


@dataclass(frozen=True, slots=True)
class Trigger:
    operation: str  # register | update | continue | release | archive | organize
    session_id: str | None
    phrase: str

    def to_dict(self) -> dict[str, Any]:
        return {"operation": self.operation, "sessionId": self.session_id, "phrase": self.phrase}


def recognise(prompt: str) -> Trigger | None:
    """The board operation ``prompt`` asks for, or None."""
    text = prompt.translate(_TO_TRADITIONAL)
    for operation, pattern in _COMPILED:
        match = pattern.search(text)
        if match:
            session_id = match.groupdict().get("id")
            return Trigger(operation, session_id.lower() if session_id else None, match.group(0))
    return None
