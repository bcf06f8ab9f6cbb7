"""Run the real hook command in a subprocess, and read back what the server stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

from memvault import Memory
from memvault.domain import Event
from memvault.hook.envelope import REPEAT_WINDOW
from tests.helpers import fixtures_dir, free_port

HOOK_FIXTURES = {
    "cursor": ("tmux-agents-captures.jsonl", "cursor-ide-audit.jsonl", "docs-examples.jsonl"),
    "claude-code": ("tmux-agents-captures.jsonl", "docs-examples.jsonl"),
    "codex": ("tmux-agents-captures.jsonl",),
    "gemini": ("tmux-agents-captures.jsonl",),
}
SESSION_KEYS = ("session_id", "conversation_id")


def fixture_payloads(host: str) -> list[tuple[str, dict]]:
    """Every captured or documented payload of ``host``, with an id ``file:line``."""
    folder = fixtures_dir() / host / "hooks"
    found = []
    for name in HOOK_FIXTURES[host]:
        for number, line in enumerate((folder / name).read_text().splitlines(), 1):
            if line.strip():
                found.append((f"{name}:{number}", json.loads(line)))
    return found


def fixture(host: str, event: str) -> dict:
    """The first fixture payload of ``event``."""
    return next(p for _, p in fixture_payloads(host) if p["hook_event_name"] == event)


def placed(payload: dict, project: Path, session: str | None = None) -> dict:
    """``payload`` moved into ``project`` and a fresh session, as a live host would send it."""
    session = session or f"s-{uuid.uuid4()}"
    moved = {**payload}
    for key in SESSION_KEYS:
        if key in moved:
            moved[key] = session
    if "workspace_roots" in moved:
        moved["workspace_roots"] = [str(project)]
    if moved.get("cwd"):
        moved["cwd"] = str(project)
    return moved


def session_of(payload: dict) -> str:
    return payload.get("conversation_id") or payload["session_id"]


def dead_url() -> str:
    """A loopback URL nothing listens on."""
    return f"http://127.0.0.1:{free_port()}"


def hook_env(home: Path, url: str, **extra: str) -> dict[str, str]:
    """A clean environment: none of the runner's own memvault or agentmemory settings."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("MEMVAULT_", "AGENTMEMORY_", "CURSOR_", "CLAUDE_"))
    }
    return {**env, "MEMVAULT_HOME": str(home), "MEMVAULT_URL": url, **extra}


def run_hook(
    host: str,
    payload: dict | str | bytes,
    env: dict[str, str],
    *,
    cwd: Path | None = None,
    command: list[str] | None = None,
) -> subprocess.CompletedProcess:
    if isinstance(payload, dict):
        payload = json.dumps(payload)
    if isinstance(payload, str):
        payload = payload.encode()
    return subprocess.run(
        command or [sys.executable, "-m", "memvault.hook", host],
        input=payload,
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=60,
        check=True,
    )


def answer(result: subprocess.CompletedProcess) -> dict | None:
    """The JSON the hook printed, None when it printed nothing; fails on anything else."""
    out = result.stdout.decode()
    if not out.strip():
        return None
    assert out.count("\n") == 1 and out.endswith("\n"), f"one JSON line expected: {out!r}"
    return json.loads(out)


def stored(home: Path, session_id: str) -> list[Event]:
    """The events the hooks sent, without the server's own records of the memory blocks
    it answered them with (``injections``)."""
    return injections(home, session_id, keep=False)


def injections(home: Path, session_id: str, *, keep: bool = True) -> list[Event]:
    """The server's records of the memory blocks it gave the session (``keep=False``:
    every other event instead)."""
    with Memory.open(home=home) as memory:
        events = memory.reads.events(session_id)
    return [e for e in events if (e.hook_type == "context_injected") == keep]


def spooled(home: Path) -> list[Path]:
    folder = home / "spool"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def one_window(needed: float = 6.0) -> None:
    """Wait, if need be, so the next ``needed`` seconds fall in one slot of the clock: a
    payload with nothing else to tell it apart is one event within a slot."""
    left = REPEAT_WINDOW - time.time() % REPEAT_WINDOW
    if left < needed:
        time.sleep(left + 0.05)
