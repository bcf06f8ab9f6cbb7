"""Hook events of a project's sessions, as the hooks send them: a prompt, the reply and the
edit that answered it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Turns:
    project: str
    cwd: str

    def event(self, session: str, n: int, hook: str, data: dict) -> dict:
        return {
            "hookType": hook,
            "sessionId": session,
            "eventId": f"{session}:{n}",
            "project": self.project,
            "cwd": self.cwd,
            "timestamp": f"2026-11-{20 + n // 60:02d}T10:00:{n % 60:02d}.000Z",
            "data": data,
        }

    def said(self, session: str, prompt: str, reply: str, path: str) -> list[dict]:
        """One turn: the prompt, the reply, and an edit of ``path``."""
        edit = {"tool_name": "Edit", "tool_input": {"file_path": path}, "tool_output": "ok"}
        return [
            self.event(session, 0, "prompt_submit", {"prompt": prompt}),
            self.event(session, 1, "assistant_response", {"assistantResponse": reply}),
            self.event(session, 2, "post_tool_use", edit),
        ]


def remembered(memory, sessions: dict[str, list[dict]]) -> None:
    """Each session's events captured and its fragments extracted, then all indexed."""
    for session, events in sessions.items():
        memory.capture.observe_many(events)
        memory.pipeline.extract_session(session)
    memory.index.index_now()
