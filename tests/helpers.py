"""Helpers for tests: envelopes, and prerequisites that CI must have."""

from __future__ import annotations

import os
import shutil

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_tool(name: str) -> str:
    """The path of an external program a test needs. Missing: a skip locally, a failure in CI."""
    path = shutil.which(name)
    if path is None:
        message = f"`{name}` is not installed"
        if IN_CI:
            pytest.fail(f"{message}, and CI must run every test")
        pytest.skip(message)
    return path


def envelope(session: str = "s1", n: int = 0, **overrides) -> dict:
    """A valid post_tool_use envelope; ``n`` varies its event id and content."""
    body = {
        "hookType": "post_tool_use",
        "sessionId": session,
        "project": "demo-app",
        "cwd": "/home/dev/code/demo-app",
        "timestamp": f"2026-11-30T10:00:{n % 60:02d}.000Z",
        "eventId": f"{session}-e{n}",
        "data": {
            "tool_name": "Bash",
            "tool_input": {"command": f"npm test -- case{n}"},
            "tool_output": f"{n} passed",
        },
    }
    body.update(overrides)
    return body
