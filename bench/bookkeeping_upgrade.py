"""What upgrading a store to migration 0019 costs: at open, and in the background after.

Builds a store as memvault wrote it before 0019 (bookkeeping indexed with its words, and
lending them to its neighbours), then opens it with this tree: the migration empties the
bookkeeping's words and vectors and logs each bookkeeping event as changed; the indexer
then reads those again with their neighbours. For ``--sessions`` sessions of a prompt, a
tool call, Claude Code's notice and a reply, prints the time to open (the migration runs
before the store answers anything) and the time to re-read the changes (lexical, in
process; the server does it between batches of new events).

    .venv/bin/python bench/bookkeeping_upgrade.py [--sessions 1000,10000,25000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).parent))

from _server import machine

from memvault import Memory
from memvault.search import documents
from memvault.store import migrations

NOTICE = {"message": "Claude needs your permission to use Bash"}
ASKED = "needs your permission"


def session(n: int) -> list[dict]:
    steps = [
        ("prompt_submit", {"prompt": f"run the tests of module {n}"}),
        ("post_tool_use", {"tool_name": "Bash", "tool_input": {"command": f"pytest m{n}"}}),
        ("notification", NOTICE),
        ("assistant_response", {"assistantResponse": f"Module {n}'s tests pass."}),
    ]
    return [
        {
            "hookType": hook,
            "sessionId": f"s{n}",
            "eventId": f"s{n}:{i}",
            "project": "demo-app",
            "cwd": "/src/demo-app",
            "timestamp": f"2026-11-{1 + n % 28:02d}T10:00:{i:02d}.000Z",
            "data": data,
        }
        for i, (hook, data) in enumerate(steps)
    ]


def before_0019(home: Path, sessions: int) -> int:
    """A store as written before 0019; how many results the notice's words find in it."""
    load = migrations.load
    with (
        mock.patch.object(migrations, "load", lambda e: [m for m in load(e) if m.version < 19]),
        mock.patch.object(documents, "bookkeeping_observation", lambda kind, hook: False),
        Memory.open(home=home, embeddings="none", llm="none") as old,
    ):
        events = [event for n in range(sessions) for event in session(n)]
        for start in range(0, len(events), 500):
            assert old.observe_many(events[start : start + 500]).failed == 0
        old.index.index_now(vectors=False)
        return len(old.index.searcher.search(ASKED, limit=50))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", default="1000,10000,25000")
    args = parser.parse_args()
    print(f"{machine()}; SQLite, lexical")
    for sessions in (int(n) for n in args.sessions.split(",")):
        with tempfile.TemporaryDirectory() as folder:
            home = Path(folder) / "home"
            found = before_0019(home, sessions)
            began = time.perf_counter()
            with Memory.open(home=home, embeddings="none", llm="none") as memory:
                opened = time.perf_counter() - began
                began = time.perf_counter()
                changes = 0
                while step := memory.index.indexer.index_changes():
                    changes += step
                reread = time.perf_counter() - began
                left = len(memory.index.searcher.search(ASKED, limit=50))
        print(
            f"{sessions:>6} sessions ({4 * sessions:,} events): open with the migration "
            f"{opened:.2f} s; {changes:,} changes re-read in {reread:.2f} s "
            f"({1000 * reread / max(changes, 1):.2f} ms each); "
            f"of 50 results of the notice's words, {found} before, {left} after"
        )


if __name__ == "__main__":
    main()
