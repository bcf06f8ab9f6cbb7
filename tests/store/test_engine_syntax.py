"""Only the store speaks an engine's language: no FTS5 expression, no SQL outside store/."""

from __future__ import annotations

import re
from pathlib import Path

import memvault

PACKAGE = Path(memvault.__file__).parent
# FTS5's column filters ("{title body} : …"), its filter tokens' column, MATCH and bm25().
FTS5 = re.compile(
    r"\{title \w|\bscope : |\bMATCH \?|\bbm25\(|\bk(?:fragment|summary|observation)\b"
)


def _sources_outside_the_store() -> list[Path]:
    return [
        path for path in PACKAGE.rglob("*.py") if "store" not in path.relative_to(PACKAGE).parts
    ]


def test_fts5_syntax_appears_only_under_store():
    found = [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for path in _sources_outside_the_store()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if FTS5.search(line)
    ]
    assert found == []


def test_the_check_sees_the_store_engine():
    engine = (PACKAGE / "store" / "sqlite" / "fts5.py").read_text(encoding="utf-8")
    assert FTS5.search(engine)
    assert (PACKAGE / "search" / "query.py") in _sources_outside_the_store()
