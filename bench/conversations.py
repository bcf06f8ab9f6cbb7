"""Conversation benchmarks in LongMemEval's retrieval protocol, through a running server:
is a session holding the answer among the first sessions search gives? memvault (default
and lexical) beside plain BM25 over whole sessions and over single turns.

Two data sets, read where they lie, never copied into the project:

- LongMemEval_S (``--longmemeval longmemeval_s.json``, the file of the LongMemEval
  release): each question has its own haystack of about fifty dated chat sessions, and is
  asked in a project of its own; ``answer_session_ids`` are its relevant sessions.
  Abstention questions (``*_abs``) have none and are left out, as LongMemEval's retrieval
  scoring leaves them; ``--questions N`` takes a seeded sample of N.
- LoCoMo (the default, ``../shared/bench/locomo/locomo10.json``): each conversation is a
  project, each of its sessions a host session; the questions of categories 1–4, whose
  evidence turns (``D3:5``) name their relevant sessions. The first speaker is the user.

Protocol, for each mode (a real ``memvault serve`` on a loopback port with a temporary
home; lexical = ``MEMVAULT_EMBEDDINGS=none``, default = the server's own defaults): every
session sent as the hooks send a chat, in date order: ``/session/start``, then its turns
through ``/observe/bulk`` (the user's as ``prompt_submit``, the other's as
``assistant_response``), dated as the data dates them; then wait until health says the
index is caught up, every document embedded and no job pending; then each question through
``/search`` (limit 30) in its project. A result names the sessions its events came from;
the ranking is those sessions, first named first. recall_any@k: a relevant session among
the first k; recall_all@k: every one of them.

    .venv/bin/python bench/conversations.py [--locomo PATH [--copies N] | --longmemeval PATH]
        [--questions N] [--lexical-only | --default-only] [--wait SECONDS] [--json PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import random
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _server import kept_copy, machine, percentile, running_server
from locomo import DEFAULT_DATA as LOCOMO
from locomo import session_time, turn_text
from real_sessions import (
    MODES,
    Baseline,
    call,
    caught_up,
    ingest,
    sessions_of,
    wait_embedder,
    wait_for,
)

from memvault.hook.envelope import QUERY_LIMIT

KS = (5, 10)
SEARCH_LIMIT = 30
PROGRESS_EVERY = 60.0  # seconds between lines while the store catches up
SYSTEMS = ("default", "lexical", "bm25-session", "bm25-turn")
_EVIDENCE = re.compile(r"D(\d+)\s*:")


# -- the data: sessions as the hooks send them, questions with their relevant sessions ----


def _session(project: str, sid: str, started: datetime, turns: list[tuple[bool, str]]) -> dict:
    """A chat session as hook events: the user's turns as prompts, the other's as replies,
    a second apart."""
    events = []
    for n, (user, text) in enumerate(turns):
        events.append(
            {
                "sessionId": sid,
                "project": project,
                "cwd": f"/chat/{project}",
                "agentId": "conversation",
                "timestamp": (started + timedelta(seconds=n + 1)).isoformat(),
                "eventId": f"{sid}:{n}",
                "hookType": "prompt_submit" if user else "assistant_response",
                "data": {"prompt": text} if user else {"assistantResponse": text},
            }
        )
    return {"id": sid, "project": project, "started": started.isoformat(), "events": events}


def locomo(path: Path, copies: int = 1) -> tuple[dict[str, list[dict]], list[dict]]:
    """LoCoMo's conversations as projects of sessions, and its questions of categories 1–4
    with the sessions their evidence turns are in. ``copies`` > 1 stores each conversation
    again in as many more projects, never asked: a store of LongMemEval_S's size (eight
    copies, about 47,000 turns) that search and the embedder work through."""
    history: dict[str, list[dict]] = {}
    questions = []
    samples = json.loads(path.read_text(encoding="utf-8"))
    for i, sample in enumerate(samples * copies):
        copy, n = divmod(i, len(samples))
        talk, project = sample["conversation"], f"locomo-{n}" + (f"-copy{copy}" if copy else "")
        user = talk["speaker_a"]
        sessions = []
        k = 1
        while f"session_{k}" in talk:
            when = datetime.fromisoformat(session_time(talk[f"session_{k}_date_time"]))
            turns = [(turn["speaker"] == user, turn_text(turn)) for turn in talk[f"session_{k}"]]
            if turns:
                sessions.append(_session(project, f"{project}-s{k}", when, turns))
            k += 1
        history[project] = sessions
        if copy:
            continue
        known = {s["id"] for s in sessions}
        for qa in sample["qa"]:
            if qa.get("category") not in (1, 2, 3, 4):
                continue
            relevant = {
                f"{project}-s{m.group(1)}"
                for evidence in qa.get("evidence") or []
                for m in _EVIDENCE.finditer(evidence)
            } & known
            if relevant:
                questions.append(
                    {
                        "project": project,
                        "query": qa["question"],
                        "relevant": sorted(relevant),
                        "group": f"category {qa['category']}",
                    }
                )
    return history, questions


def longmemeval(path: Path, sample: int | None, seed: int = 7) -> tuple[dict, list[dict]]:
    """LongMemEval's questions (a seeded sample of ``sample``, abstentions left out), each
    with its haystack as a project of its own."""
    rows = [
        row
        for row in json.loads(path.read_text(encoding="utf-8"))
        if not str(row["question_id"]).endswith("_abs") and row.get("answer_session_ids")
    ]
    if sample is not None and sample < len(rows):
        rows = random.Random(seed).sample(rows, sample)
    history, questions = {}, []
    for row in rows:
        project = f"lme-{row['question_id']}"
        sessions = []
        haystack = ("haystack_session_ids", "haystack_dates", "haystack_sessions")
        dated = zip(*(row[key] for key in haystack), strict=True)
        for sid, date, turns in dated:
            when = datetime.strptime(date, "%Y/%m/%d (%a) %H:%M").replace(tzinfo=UTC)
            said = [(t["role"] == "user", t["content"]) for t in turns if t.get("content")]
            if said:
                sessions.append(_session(project, f"{project}-{sid}", when, said))
        history[project] = sessions
        known = {s["id"] for s in sessions}
        relevant = {f"{project}-{sid}" for sid in row["answer_session_ids"]} & known
        if relevant:
            questions.append(
                {
                    "project": project,
                    "query": row["question"],
                    "relevant": sorted(relevant),
                    "group": row.get("question_type", "question"),
                }
            )
    return history, questions


# -- asking -------------------------------------------------------------------------------


def search(url: str, question: dict) -> tuple[list[str], float]:
    """The sessions a question's search names, first named first, and its milliseconds."""
    body = {
        "query": question["query"][:QUERY_LIMIT],
        "project": question["project"],
        "limit": SEARCH_LIMIT,
    }
    started = time.perf_counter()
    found = call(url, "/agentmemory/search", body)
    took = (time.perf_counter() - started) * 1000
    return list(dict.fromkeys(s for h in found["results"] for s in sessions_of(h))), took


def run_mode(
    mode: str,
    history: dict,
    questions: list[dict],
    cap: float,
    keep: Path | None = None,
    *,
    kept: Path | None = None,
    prepare: Callable[[Path], None] | None = None,
) -> dict:
    """Ingest, wait until caught up (a question searched at each look while documents wait
    for vectors: what a session starting during the catch-up waits for), then ask. With
    ``keep``, the server's home is kept in ``keep/<mode>``; with ``kept``, a copy of such a
    home is asked instead, nothing ingested (``prepare`` changes the copy first:
    ``bench/backlog.py``)."""
    during: list[float] = []
    turn = itertools.cycle(questions)

    shown = [0.0]

    def probe() -> None:
        during.append(search(url, next(turn))[1])

    def look(seconds: float, report: dict) -> None:
        """A line a minute while the store catches up: a large one takes half an hour."""
        if seconds - shown[0] >= PROGRESS_EVERY:
            shown[0] = seconds
            waiting = report["index"].get("documentsNotEmbedded") or 0
            jobs = report["queue"]["jobsPending"] + report["queue"]["jobsRunning"]
            print(
                f"{mode}: {seconds:.0f} s, {waiting:,} documents waiting for vectors,"
                f" {jobs} pipeline jobs",
                flush=True,
            )

    env = dict(MODES[mode])
    if keep is not None:
        (keep / mode).mkdir(parents=True)
        env["MEMVAULT_HOME"] = str(keep / mode)
    with contextlib.ExitStack() as stack:
        if kept is not None:
            env["MEMVAULT_HOME"] = str(stack.enter_context(kept_copy(kept, mode, prepare)))
        url = stack.enter_context(running_server(**env))
        wait_embedder(url)
        began = time.perf_counter()
        events = ingest(url, history) if kept is None else 0
        seconds, _ = wait_for(url, began, cap, caught_up, probe, look)
        asked = [search(url, question) for question in questions]
    return {
        "events": events,
        "caught_up_s": seconds,
        "ranked": [ranked for ranked, _ in asked],
        "search_ms": [took for _, took in asked],
        "search_during_ms": during,
    }


def recalls(ranked: list[str], relevant: list[str]) -> dict[str, float]:
    out = {}
    for k in KS:
        top = set(ranked[:k])
        out[f"any@{k}"] = float(bool(top & set(relevant)))
        out[f"all@{k}"] = float(set(relevant) <= top)
    return out


def figures(questions: list[dict], scored: dict[str, list[dict]]) -> dict:
    """Per group of questions (and all), each system's mean of each recall."""
    groups: dict[str, list[int]] = defaultdict(list)
    for n, question in enumerate(questions):
        groups["all"].append(n)
        groups[question["group"]].append(n)
    return {
        group: {
            "n": len(members),
            **{
                system: {
                    key: statistics.fmean(scored[system][n][key] for n in members)
                    for key in scored[system][members[0]]
                }
                for system in scored
            },
        }
        for group, members in sorted(groups.items(), key=lambda g: (g[0] != "all", g[0]))
    }


def show(table: dict, systems: list[str]) -> None:
    print("\nsessions found by search: recall_any@5 / recall_all@5 / recall_any@10")
    print(f"{'questions':<28}{'n':>5}" + "".join(f"{s:>20}" for s in systems))
    for group, cells in table.items():
        row = "".join(
            f"   {cells[s]['any@5']:.3f} {cells[s]['all@5']:.3f} {cells[s]['any@10']:.3f}"
            for s in systems
        )
        print(f"{group:<28}{cells['n']:>5}{row}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--locomo", type=Path, default=LOCOMO)
    source.add_argument("--longmemeval", type=Path, help="longmemeval_s.json")
    parser.add_argument("--questions", type=int, help="a seeded sample of N (LongMemEval)")
    parser.add_argument(
        "--copies",
        type=int,
        default=1,
        help="LoCoMo stored N times over, asked once: a larger store (8: LongMemEval_S's size)",
    )
    parser.add_argument("--lexical-only", action="store_true", help="skip the default mode")
    parser.add_argument("--default-only", action="store_true", help="skip the lexical mode")
    parser.add_argument(
        "--wait", type=float, default=3600, help="seconds to wait for caught up (default 3600)"
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--keep",
        type=Path,
        help="keep each mode's server home (store and vault) in DIR/<mode> (new folders)",
    )
    args = parser.parse_args()
    if args.keep is not None and any((args.keep / mode).exists() for mode in MODES):
        parser.error(f"--keep {args.keep}: a mode's folder is there already; give a new one")
    path = args.longmemeval or args.locomo
    if not path.is_file():
        parser.error(f"{path} is not here: the data sets are read where they lie")
    if args.longmemeval is not None:
        # Named by its file: bench/haystacks.py writes other data in the same format.
        name, (history, questions) = path.name, longmemeval(path, args.questions)
    else:
        copies = f", stored {args.copies} times" if args.copies > 1 else ""
        name, (history, questions) = f"LoCoMo{copies}", locomo(path, args.copies)
    modes = ["lexical"] if args.lexical_only else ["default"] if args.default_only else list(MODES)
    sessions = sum(map(len, history.values()))
    turns = sum(len(s["events"]) for group in history.values() for s in group)
    print(
        f"{name} in LongMemEval's protocol: {len(history)} projects, {sessions} sessions"
        f" ({turns:,} turns), {len(questions)} questions — {machine()},"
        f" {datetime.now(UTC):%Y-%m-%d}",
        flush=True,
    )
    scored: dict[str, list[dict]] = {}
    runs = {}
    for mode in modes:
        runs[mode] = run_mode(mode, history, questions, args.wait, args.keep)
        scored[mode] = [
            recalls(r, q["relevant"]) for q, r in zip(questions, runs[mode]["ranked"], strict=True)
        ]
        times, during = runs[mode]["search_ms"], runs[mode]["search_during_ms"]
        caught = runs[mode]["caught_up_s"]
        print(
            f"{mode}: {runs[mode]['events']:,} turns posted; caught up"
            f" {'not within the wait' if caught is None else f'{caught:.0f} s after the first'};"
            f" /search p50 {statistics.median(times):.0f} ms, p95 {percentile(times, 95):.0f} ms",
            flush=True,
        )
        if during:
            print(
                f"{mode}: /search while documents waited for vectors: n={len(during)}"
                f" p50 {statistics.median(during):.0f} ms, p95 {percentile(during, 95):.0f} ms",
                flush=True,
            )
    baselines = {project: Baseline(group) for project, group in history.items()}
    for system, per in (("bm25-session", "session"), ("bm25-turn", "event")):
        scored[system] = [
            recalls(baselines[q["project"]].rank(q["query"], per), q["relevant"]) for q in questions
        ]
    table = figures(questions, scored)
    show(table, [s for s in SYSTEMS if s in scored])
    if args.json:
        report = {
            "data": name,
            "figures": table,
            "modes": {m: {k: v for k, v in r.items() if k != "ranked"} for m, r in runs.items()},
            "questions": [
                {**q, **{f"{m} ranked": runs[m]["ranked"][n][:10] for m in runs}}
                for n, q in enumerate(questions)
            ],
        }
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
