"""Coding-agent retrieval benchmark: do search and the injected context find what a user
asks about their own past sessions?

The data (bench/data/coding_sessions.json, written for memvault) holds coding sessions of
two projects (prompts, reads, edits, commands, test failures and fixes, decisions) in
English and Chinese, and questions of the kinds users ask ("how did we fix the flaky auth
test", "which file holds the retry policy", "what did we decide about tokens", 重试策略写在
哪个文件里), each labelled with the events any one of which answers it.

Protocol: one store; every event goes in through ``Memory.observe_many``; each session is
then summarized and its fragments extracted by the offline pipeline, and the index brought
up to date. A result answers a question when one of the event ids it carries (an
observation's event, a fragment's ``events``, a summary's first events) is one of the
question's answers; recall@k is the share of questions answered within the top k:

- search: ``Memory.search`` over every kind of memory, no project filter (as ``memvault
  search`` asks), and over observations only (LoCoMo's protocol);
- context: ``Memory.context`` with the question's project and the default token budget
  (what ``POST /agentmemory/context`` answers): is an answer among the injected block's
  memories?

Lexical (no embedder) and hybrid (the default local embedder), offline; ``--ablation``
scores lexical search with the constants chosen on LoCoMo off, one at a time and all:

    .venv/bin/python bench/coding.py [--modes lexical,hybrid] [--questions N] [--json out.json]
        [--no-fixtures] [--ablation]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _server import machine

from memvault import Memory
from memvault.importers import claude_code
from memvault.importers.driver import run_import
from memvault.search import documents, engine, indexer
from memvault.search import lexical as candidates

DATA = Path(__file__).parent / "data" / "coding_sessions.json"
# Real Claude Code transcripts (tests/fixtures/claude-code/PROVENANCE.md), imported as
# other projects' memory beside the written sessions: none of them answers a question.
FIXTURES = (
    Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "claude-code" / "transcripts"
)
KS = (5, 10)
_CJK = re.compile(r"[\u3400-\u9fff]")


def _tool(name: str, tool_input: dict, output: str) -> dict:
    return {"tool_name": name, "tool_input": tool_input, "tool_output": output}


def _payload(kind: str, args: list[str]) -> tuple[str, dict]:
    """One event of the data file's shorthand as the hook type and data a host sends."""
    if kind == "prompt":
        return "prompt_submit", {"prompt": args[0]}
    if kind == "say":
        return "assistant_response", {"assistantResponse": args[0]}
    if kind == "read":
        return "post_tool_use", _tool("Read", {"file_path": args[0]}, args[1])
    if kind == "grep":
        return "post_tool_use", _tool("Grep", {"pattern": args[0]}, args[1])
    if kind == "edit":
        change = {"file_path": args[0], "old_string": args[1], "new_string": args[2]}
        return "post_tool_use", _tool("Edit", change, "The file has been updated.")
    if kind == "write":
        written = {"file_path": args[0], "content": args[1]}
        return "post_tool_use", _tool("Write", written, f"File created: {args[0]}")
    if kind == "run":
        return "post_tool_use", _tool("Bash", {"command": args[0]}, args[1])
    if kind == "fail":
        return "post_tool_failure", {
            "tool_name": "Bash",
            "tool_input": {"command": args[0]},
            "error": args[1],
        }
    raise ValueError(f"unknown event kind {kind!r}")


def events(session: dict) -> list[dict]:
    """A session's events as envelopes, one minute apart."""
    start = datetime.fromisoformat(session["start"].replace("Z", "+00:00"))
    out = []
    for n, item in enumerate(session["events"], 1):
        name = item[0][1:] if item[0].startswith("@") else str(n)
        kind, *args = item[1:] if item[0].startswith("@") else item
        hook, data = _payload(kind, args)
        at = start + timedelta(minutes=n)
        out.append(
            {
                "hookType": hook,
                "sessionId": session["id"],
                "project": session["project"],
                "cwd": f"/code/{session['project']}",
                "timestamp": at.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                "eventId": f"{session['id']}:{name}",
                "data": data,
            }
        )
    return out


def language(question: str) -> str:
    return "zh" if _CJK.search(question) else "en"


def build(memory: Memory, sessions: list[dict], fixtures: list[Path]) -> dict[str, int]:
    """Ingest every session (and the fixture transcripts), run the offline pipeline over
    each, index; documents per kind."""
    report = run_import(memory, [claude_code.transcript(path) for path in fixtures])
    assert report.error_count == 0, report.errors[:3]
    for session in sessions:
        result = memory.observe_many(events(session))
        assert result.failed == 0, result.errors[:3]
    for session in memory.reads.sessions(limit=1000):
        # As POST /observe does for a session that never sent session/start.
        if memory.board.needs_board_row(session.id):
            memory.board.register_from_event(session.id, None)
        memory.pipeline.summarize_session(session.id)
        memory.pipeline.extract_session(session.id)
    if memory.index.semantic is not None:
        memory.index.semantic.warm()
    memory.index.index_now()
    projects = sorted({session.project for session in memory.reads.sessions(limit=1000)})
    return {
        kind: sum(len(memory.store.document_ids(kinds=[kind], project=p)) for p in projects)
        for kind in ("observation", "fragment", "summary")
    }


def _answered(found: list[set[str]], answers: set[str]) -> list[bool]:
    """Whether an answer is among the first k results' event ids, for each k."""
    return [any(answers & ids for ids in found[:k]) for k in KS]


def evaluate(memory: Memory, questions: list[dict], sessions: list[dict]) -> dict:
    projects = {s["id"]: s["project"] for s in sessions}
    spoken = {s["id"]: language(" ".join(e[-1] for e in s["events"][:1])) for s in sessions}
    rows = []
    latencies: dict[str, list[float]] = defaultdict(list)
    for question in questions:
        answers = set(question["answers"])
        asked_in = language(question["q"])
        session = question["answers"][0].split(":", 1)[0]
        row = {
            "q": question["q"],
            "lang": asked_in,
            "kind": question["kind"],
            "across": asked_in != spoken[session],  # asked in the other language
        }
        for name, kinds in (("search", None), ("observations", ["observation"])):
            started = time.perf_counter()
            hits = memory.search(question["q"], limit=max(KS), kinds=kinds)
            latencies[name].append((time.perf_counter() - started) * 1000)
            row[name] = _answered([set(hit.document.event_ids) for hit in hits], answers)
        project = projects[session]
        started = time.perf_counter()
        packed = memory.context.context(project=project, query=question["q"])
        latencies["context"].append((time.perf_counter() - started) * 1000)
        given: set[str] = set()
        for block in packed.blocks:
            if block["kind"] in ("fragment", "summary", "observation"):
                document = memory.store.document(block["kind"], block["id"])
                if document is not None:
                    given.update(document.event_ids)
        row["context"] = bool(answers & given)
        row["context_tokens"] = packed.tokens
        rows.append(row)
    return {"rows": rows, "latency_ms": {k: statistics.median(v) for k, v in latencies.items()}}


def table(rows: list[dict]) -> dict[str, dict[str, float]]:
    """Recall per group: all questions, each language, each kind of question, and the
    questions asked in the other language than their session's."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        named = [row["lang"], row["kind"]] + (["across"] if row["across"] else [])
        for group in ("all", *named):
            groups[group].append(row)
    order = ["all", "en", "zh", "across", "fix", "why", "file", "decision", "fact"]
    out = {}
    for group, members in sorted(groups.items(), key=lambda item: order.index(item[0])):
        cells: dict[str, float] = {"n": len(members)}
        for name in ("search", "observations"):
            for i, k in enumerate(KS):
                cells[f"{name}@{k}"] = statistics.fmean(r[name][i] for r in members)
        cells["context"] = statistics.fmean(r["context"] for r in members)
        out[group] = cells
    return out


# The LoCoMo-measured constants (bench/locomo.py --cross-validate), each as "off".
CONSTANTS = ("context", "dates", "speaker", "session")


def switch_off(names: set[str]) -> None:
    """Set these ranking constants off for what is indexed and searched from now on."""
    weights = list(candidates.COLUMN_WEIGHTS)
    if "context" in names:
        indexer.CONTEXT_BEFORE = indexer.CONTEXT_AFTER = 0
    if "dates" in names:
        documents.date_terms = lambda _: ""
        weights[3] = 0.0
    if "speaker" in names:
        engine.ACTOR_BOOST = 0.0
    if "session" in names:
        engine.SESSION_BOOST = 0.0
    candidates.COLUMN_WEIGHTS = tuple(weights)
    engine._MAX_FUSED = 1 + engine.ACTOR_BOOST + engine.SESSION_BOOST * (1 + engine.ACTOR_BOOST)


def ablation(sessions: list[dict], questions: list[dict], fixtures: list[Path]) -> None:
    """Lexical recall with every constant off, with the defaults, and with each one off."""
    steps = {"every constant off": set(CONSTANTS), "defaults": set()}
    steps.update({f"without {name}": {name} for name in CONSTANTS})
    for label, names in steps.items():
        saved = (indexer.CONTEXT_BEFORE, documents.date_terms, candidates.COLUMN_WEIGHTS)
        boosts = (engine.ACTOR_BOOST, engine.SESSION_BOOST, engine._MAX_FUSED)
        switch_off(names)
        try:
            with (
                tempfile.TemporaryDirectory() as home,
                Memory.open(home=Path(home), embeddings="none", llm="none") as memory,
            ):
                build(memory, sessions, fixtures)
                cells = table(evaluate(memory, questions, sessions)["rows"])["all"]
        finally:
            indexer.CONTEXT_BEFORE = indexer.CONTEXT_AFTER = saved[0]
            documents.date_terms, candidates.COLUMN_WEIGHTS = saved[1], saved[2]
            engine.ACTOR_BOOST, engine.SESSION_BOOST, engine._MAX_FUSED = boosts
        print(
            f"lexical {label:19} search {cells['search@5']:.3f}/{cells['search@10']:.3f}"
            f"  observations {cells['observations@5']:.3f}/{cells['observations@10']:.3f}"
            f"  context {cells['context']:.3f}",
            flush=True,
        )


def budget_curve(
    sessions: list[dict], questions: list[dict], fixtures: list[Path], budgets: list[int]
) -> None:
    """Answers in the block, and the tokens it took, at each budget (lexical)."""
    projects = {s["id"]: s["project"] for s in sessions}
    with (
        tempfile.TemporaryDirectory() as home,
        Memory.open(home=Path(home), embeddings="none", llm="none") as memory,
    ):
        build(memory, sessions, fixtures)
        for budget in budgets:
            answered, spent = [], []
            for question in questions:
                project = projects[question["answers"][0].split(":", 1)[0]]
                packed = memory.context.context(project=project, query=question["q"], budget=budget)
                given: set[str] = set()
                for block in packed.blocks:
                    if block["kind"] in ("fragment", "summary", "observation"):
                        document = memory.store.document(block["kind"], block["id"])
                        if document is not None:
                            given.update(document.event_ids)
                answered.append(bool(set(question["answers"]) & given))
                spent.append(packed.tokens)
            print(
                f"budget {budget:>5}: context {statistics.fmean(answered):.3f}"
                f"  tokens median {statistics.median(spent):.0f} max {max(spent)}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--modes", default="lexical,hybrid")
    parser.add_argument("--questions", type=int, help="only the first N questions")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--no-fixtures", action="store_true", help="the written sessions only")
    parser.add_argument(
        "--ablation", action="store_true", help="lexical, with each LoCoMo constant off in turn"
    )
    parser.add_argument(
        "--budgets", help="lexical context only, at each of these token budgets (250,500,…)"
    )
    args = parser.parse_args()
    fixtures = [] if args.no_fixtures else sorted(FIXTURES.glob("*.jsonl"))
    data = json.loads(args.data.read_text())
    sessions, questions = data["sessions"], data["questions"][: args.questions]
    print(
        f"coding-agent retrieval: {len(sessions)} sessions,"
        f" {sum(len(s['events']) for s in sessions)} events, {len(questions)} questions,"
        f" {len(fixtures)} fixture transcripts beside them"
        f" — {machine()}"
    )
    if args.ablation:
        ablation(sessions, questions, fixtures)
        return
    if args.budgets:
        budgets = [int(b) for b in args.budgets.split(",")]
        budget_curve(sessions, questions, fixtures, budgets)
        return
    everything = {}
    for mode in args.modes.split(","):
        with tempfile.TemporaryDirectory() as home:
            embeddings = "none" if mode == "lexical" else "local"
            with Memory.open(home=Path(home), embeddings=embeddings, llm="none") as memory:
                started = time.perf_counter()
                counts = build(memory, sessions, fixtures)
                built = time.perf_counter() - started
                result = evaluate(memory, questions, sessions)
        figures = table(result["rows"])
        everything[mode] = {"documents": counts, "figures": figures, **result}
        print(
            f"{mode}: {counts['observation']} observations, {counts['fragment']} fragments,"
            f" {counts['summary']} summaries (ingest, pipeline and index {built:.1f} s);"
            f" median ms: " + ", ".join(f"{k} {v:.1f}" for k, v in result["latency_ms"].items())
        )
        for group, cells in figures.items():
            print(
                f"{mode:8} {group:9} n={cells['n']:<3}"
                f" search {cells['search@5']:.3f}/{cells['search@10']:.3f}"
                f"  observations {cells['observations@5']:.3f}/{cells['observations@10']:.3f}"
                f"  context {cells['context']:.3f}"
            )
    if args.json:
        args.json.write_text(json.dumps(everything, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
