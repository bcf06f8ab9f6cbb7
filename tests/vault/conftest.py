from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone

import pytest

from memvault.vault.lifecycle import SessionBoard

TAIPEI = timezone(timedelta(hours=8))


class Clock:
    """A settable local clock (UTC+8, like the board's first users)."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock():
    return Clock(datetime(2026, 11, 30, 14, 32, 10, tzinfo=TAIPEI))


@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "vault"
    (root / "wiki").mkdir(parents=True)
    (root / "raw").mkdir()
    (root / "wiki" / "index.md").write_text("# Wiki\n\n- [[Some page]]\n", encoding="utf-8")
    (root / "wiki" / "log.md").write_text("## 2026-11-01\n- started\n", encoding="utf-8")
    (root / "raw" / "clip.md").write_text("raw clipping\n", encoding="utf-8")
    return root


@pytest.fixture
def board(vault, clock):
    # The session board's spec writes its placeholders in Traditional Chinese.
    return SessionBoard(vault, clock=clock, language="zh-Hant")


def tree_digest(folder) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }
