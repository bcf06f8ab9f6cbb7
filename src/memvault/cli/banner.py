"""What a starting server says once it is ready: where it answers, what it loaded, and
what to run next. Plain lines on stderr, beside uvicorn's own log."""

from __future__ import annotations

import sys
from typing import TextIO

from memvault.memory import EmbedderState, Health, LLMState, Memory


def announce(memory: Memory, *, out: TextIO | None = None) -> None:
    """Print the start banner for ``memory``'s server."""
    out = out or sys.stderr
    out.write(banner(memory.health.report(), memory.settings.server_url))
    out.flush()


def banner(health: Health, url: str) -> str:
    store = health.store
    lines = [
        f"memvault {health.version} is ready at {url}",
        f"  store     {store.location} ({store.engine}, {store.events:,} events)",
        f"  vault     {health.vault} ({health.board_rows:,} board rows, "
        f"{health.fragments:,} fragments)",
        "            open this folder in Obsidian (Open folder as vault) to read memory; "
        "`memvault vault PATH` points memvault at a vault you already have",
        f"  embedder  {_embedder(health.embedder)}",
        f"  LLM       {_llm(health.llm)}",
    ]
    if health.status != "ok":
        lines.append(f"  status    {health.status}: {'; '.join(health.reasons)}")
    lines += [
        "next:",
        "  memvault install claude-code   connect Claude Code (or: memvault install cursor)",
        "  memvault doctor                check the whole setup, with a fix for each problem",
        f"  {url}/".ljust(33) + "the viewer: board, sessions, search, health",
        f"  {url}/docs".ljust(33) + "the API, to read and try",
    ]
    return "\n".join(lines) + "\n"


def _embedder(state: EmbedderState | None) -> str:
    if state is None or state.provider == "none":
        reason = state.reason if state is not None else "none"
        return f"none ({reason}): search is lexical"
    name = f"{state.provider} {state.model or ''}".strip()
    if state.loaded:
        return f"{name}, {state.dimension} dimensions"
    return f"{name}, not loaded ({state.reason}): search is lexical until it is"


def _llm(state: LLMState | None) -> str:
    if state is None or state.provider == "none":
        reason = state.reason if state is not None else "none configured"
        return f"none ({reason})"
    return f"{state.provider} {state.model or ''}".strip()
