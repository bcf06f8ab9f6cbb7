"""Helpers the install tests share."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import shared_dir


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file and folder under ``root``, with file contents: a byte-exact picture."""
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def read_json(path: Path) -> dict:
    return json.loads(path.read_text("utf-8"))


def fixture_events(host: str) -> set[str]:
    """Every hook event name in the recorded payloads of ``host``."""
    events = set()
    for recording in sorted((shared_dir() / "fixtures" / host / "hooks").glob("*.jsonl")):
        for line in recording.read_text("utf-8").splitlines():
            if line.strip():
                events.add(json.loads(line)["hook_event_name"])
    return events


def hook_commands(handlers: list) -> list[str]:
    return [h["command"] for h in handlers if "memvault-hook" in h.get("command", "")]
