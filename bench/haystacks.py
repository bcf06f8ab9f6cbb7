"""LongMemEval_S's shape from data that is here: writes a file in the LongMemEval release's
format, for ``bench/conversations.py --longmemeval``, until the release's own file is at
hand. Nothing of it is LongMemEval's: the figures it gives are not LongMemEval's.

What it keeps of LongMemEval_S (Wu et al., 2024):
- each question has a haystack of its own, asked in a project of its own;
- a haystack is the question's evidence sessions among sessions of the same people (other
  sessions of its LoCoMo conversation) and fillers drawn from one shared pool, so the
  same filler is stored in many projects, as LongMemEval's are;
- the pool mixes short talk (the other LoCoMo conversations) with chats whose assistant
  turns run long (the English chats of ``../shared/bench/coding-sessions``, the user's
  requests and the agent's replies), as LongMemEval's ShareGPT and UltraChat fillers do.

Questions are LoCoMo's of categories 1–4, a seeded sample; the relevant sessions are those
their evidence turns are in. Read where the data lies, written where asked (never into
the project: LoCoMo's licence is non-commercial).

    .venv/bin/python bench/haystacks.py OUT.json [--questions 60] [--size 40] [--own 10]
    .venv/bin/python bench/conversations.py --longmemeval OUT.json --lexical-only
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from conversations import locomo
from locomo import DEFAULT_DATA as LOCOMO
from real_sessions import DATA as CODING

DATE = "%Y/%m/%d (%a) %H:%M"  # LongMemEval's haystack_dates


def _turns(events: list[dict]) -> list[dict]:
    """Hook events as LongMemEval's turns: prompts as the user's, replies as the
    assistant's, everything else (tool calls) left out."""
    turns = []
    for event in events:
        if event["hookType"] == "prompt_submit" and event["data"].get("prompt"):
            turns.append({"role": "user", "content": event["data"]["prompt"]})
        elif event["hookType"] == "assistant_response":
            text = event["data"].get("assistantResponse") or ""
            if text:
                turns.append({"role": "assistant", "content": text})
    return turns


def _dated(started: str) -> str:
    return datetime.fromisoformat(started.replace("Z", "+00:00")).strftime(DATE)


def coding_chats(folder: Path) -> list[tuple[str, str, list[dict]]]:
    """The English coding sessions with a reply, as (id, date, turns)."""
    chats = []
    with (folder / "sessions.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            turns = _turns(row["events"])
            if row.get("language") == "en" and any(t["role"] == "assistant" for t in turns):
                chats.append((f"code-{row['id']}", _dated(row["started"]), turns))
    return chats


def build(
    locomo_path: Path, coding: Path | None, questions: int, size: int, own: int, seed: int
) -> list[dict]:
    history, asked = locomo(locomo_path)
    sessions = {
        s["id"]: (s["id"], _dated(s["started"]), _turns(s["events"]))
        for project in history.values()
        for s in project
    }
    chats = coding_chats(coding) if coding else []
    picked = {chat[0]: chat for chat in chats} | sessions
    rng = random.Random(seed)
    rows = []
    for n, question in enumerate(rng.sample(asked, min(questions, len(asked)))):
        mine = [s["id"] for s in history[question["project"]]]
        evidence = list(question["relevant"])
        others = [sid for sid in mine if sid not in evidence]
        chosen = evidence + rng.sample(others, min(own, len(others)))
        pool = [sid for sid in sessions if sid not in mine]
        room = max(size - len(chosen), 0)  # none when the evidence and its people fill it
        fillers = rng.sample(pool, min(len(pool), (room + 1) // 2))
        fillers += [chat[0] for chat in rng.sample(chats, min(len(chats), room))]
        chosen += fillers[:room]
        haystack = sorted((picked[sid] for sid in chosen), key=lambda s: (s[1], s[0]))
        rows.append(
            {
                "question_id": f"locomo-{n}",
                "question_type": question["group"],
                "question": question["query"],
                "answer": "",
                "haystack_session_ids": [s[0] for s in haystack],
                "haystack_dates": [s[1] for s in haystack],
                "haystack_sessions": [s[2] for s in haystack],
                "answer_session_ids": evidence,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--locomo", type=Path, default=LOCOMO)
    parser.add_argument("--coding", type=Path, default=CODING)
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--size", type=int, default=40, help="sessions in each haystack")
    parser.add_argument("--own", type=int, default=10, help="of them, the same people's")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    for name in ("questions", "size"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if args.own < 0:
        parser.error("--own must be 0 or more")
    if not args.out.parent.is_dir():
        parser.error(f"{args.out.parent} is not a folder to write {args.out.name} in")
    if not args.locomo.exists():
        sys.exit(f"LoCoMo is not at {args.locomo}: pass --locomo")
    coding = args.coding if (args.coding / "sessions.jsonl").exists() else None
    if coding is None:
        print(f"no coding sessions at {args.coding}: fillers are LoCoMo's only", file=sys.stderr)
    rows = build(args.locomo, coding, args.questions, args.size, args.own, args.seed)
    args.out.write_text(json.dumps(rows), encoding="utf-8")
    turns = sum(len(s) for row in rows for s in row["haystack_sessions"])
    print(f"{len(rows)} questions, {turns:,} turns -> {args.out}")


if __name__ == "__main__":
    main()
