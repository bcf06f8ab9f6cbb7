"""LoCoMo retrieval benchmark: does search put a question's evidence turns in the top k?

Protocol: one store per conversation; each turn is one event (``speaker: text``, plus
``[shares <caption>]`` when the turn shares an image), timestamped with its session's date,
with its ``dia_id`` as event id. Each question is searched with ``kinds: ["observation"]``;
recall@k is the share of the question's evidence ids among the primary event ids
(``eventIds[0]``) of the top k results. Reported per category at k = 5 and 10, lexical and
hybrid, with the default ranking weights and with relevance only.

The data set (non-commercial licence) is read where it lies, never copied:

    .venv/bin/python bench/locomo.py [--data ../shared/bench/locomo/locomo10.json]
        [--modes lexical,hybrid] [--conversations 0-9] [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _server import machine

from memvault import Memory
from memvault.search import documents, engine, indexer
from memvault.search.ranking import RELEVANCE_ONLY, Weights

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo" / "locomo10.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
KS = (5, 10)


def session_time(text: str) -> str:
    parsed = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    return parsed.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def turn_text(turn: dict) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shares {turn['blip_caption']}]"
    return text


def events(sample: dict) -> list[dict]:
    conversation = sample["conversation"]
    out = []
    n = 1
    while f"session_{n}" in conversation:
        start = session_time(conversation[f"session_{n}_date_time"])
        base = datetime.fromisoformat(start.replace("Z", "+00:00"))
        for i, turn in enumerate(conversation[f"session_{n}"]):
            # Turns keep their order within the session: one second apart.
            at = base.replace(second=0).timestamp() + i
            out.append(
                {
                    "hookType": "prompt_submit",
                    "sessionId": f"{sample['sample_id']}-session-{n}",
                    "project": sample["sample_id"],
                    "cwd": "/locomo",
                    "timestamp": datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                    "eventId": turn["dia_id"],
                    "data": {"prompt": turn_text(turn)},
                }
            )
        n += 1
    return out


def evaluate(memory: Memory, sample: dict, weights: Weights, stats: dict, latencies: list) -> None:
    for qa in sample["qa"]:
        evidence = set(qa.get("evidence") or [])
        if not evidence:
            continue
        started = time.perf_counter()
        hits = memory.search(qa["question"], limit=max(KS), kinds=["observation"], weights=weights)
        latencies.append((time.perf_counter() - started) * 1000)
        primary = [hit.document.event_ids[0] for hit in hits if hit.document.event_ids]
        for k in KS:
            found = len(evidence & set(primary[:k]))
            stats[(qa["category"], k)].append(found / len(evidence))


def run(data: list[dict], mode: str, conversations: list[int]) -> dict:
    results: dict[str, dict] = {}
    variants = {"default": Weights(), "relevance": RELEVANCE_ONLY}
    stats = {name: defaultdict(list) for name in variants}
    latencies: list[float] = []
    index_seconds = 0.0
    for c in conversations:
        sample = data[c]
        with tempfile.TemporaryDirectory() as home:
            settings = {"embeddings": "none" if mode == "lexical" else "local"}
            with Memory.open(home=Path(home), **settings) as memory:
                started = time.perf_counter()
                bulk = memory.observe_many(events(sample))
                assert bulk.failed == 0, bulk.errors[:3]
                if memory.semantic is not None:
                    memory.semantic.warm()
                memory.index_now()
                index_seconds += time.perf_counter() - started
                for name, weights in variants.items():
                    evaluate(memory, sample, weights, stats[name], latencies)
    for name in variants:
        table = {}
        for k in KS:
            main = [v for cat in (1, 2, 3, 4) for v in stats[name][(cat, k)]]
            table[f"cats1-4@{k}"] = statistics.fmean(main)
            for cat in CATEGORIES:
                values = stats[name][(cat, k)]
                if values:
                    table[f"cat{cat}@{k}"] = statistics.fmean(values)
        table["questions1-4"] = sum(len(stats[name][(cat, 10)]) for cat in (1, 2, 3, 4))
        results[name] = table
    results["latency_ms"] = {
        "p50": statistics.median(latencies),
        "p95": statistics.quantiles(latencies, n=20)[18],
    }
    results["index_seconds"] = index_seconds
    return results


# Each step of the ablation: what the index and the ranking use (the last is memvault's).
ABLATION = {
    "own text only": {"context": 0, "weight": 0.0, "dates": False, "actor": 0.0, "session": 0.0},
    "+ context ±1 @0.3": {
        "context": 1,
        "weight": 0.3,
        "dates": False,
        "actor": 0.0,
        "session": 0.0,
    },
    "context ±2 @0.5": {"context": 2, "weight": 0.5, "dates": False, "actor": 0.0, "session": 0.0},
    "+ dates in words": {"context": 2, "weight": 0.5, "dates": True, "actor": 0.0, "session": 0.0},
    "+ speaker boost": {"context": 2, "weight": 0.5, "dates": True, "actor": 0.1, "session": 0.0},
    "+ session boost": {"context": 2, "weight": 0.5, "dates": True, "actor": 0.1, "session": 0.2},
}


def configure(step: dict) -> None:
    """Set the index and ranking constants an ablation step varies."""
    indexer.CONTEXT_BEFORE = indexer.CONTEXT_AFTER = step["context"]
    engine.COLUMN_WEIGHTS = (1.0, 1.0, step["weight"], 0.5 if step["dates"] else 0.0)
    engine.ACTOR_BOOST = step["actor"]
    engine.SESSION_BOOST = step["session"]
    engine._MAX_FUSED = 1 + step["actor"] + step["session"] * (1 + step["actor"])
    documents.date_terms = _DATE_TERMS if step["dates"] else (lambda _: "")


_DATE_TERMS = documents.date_terms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--modes", default="lexical,hybrid")
    parser.add_argument("--conversations", default="0-9")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--ablation", action="store_true", help="recall@10 of each step that got memvault here"
    )
    args = parser.parse_args()
    if not args.data.exists():
        sys.exit(f"LoCoMo data not found at {args.data}: pass --data")
    data = json.loads(args.data.read_text())
    first, _, last = args.conversations.partition("-")
    conversations = list(range(int(first), int(last or first) + 1))
    print(f"LoCoMo retrieval, conversations {args.conversations} — {machine()}")
    if args.ablation:
        for mode in args.modes.split(","):
            for name, step in ABLATION.items():
                configure(step)
                table = run(data, mode, conversations)["relevance"]
                print(f"{mode:8} {name:20} cats1-4@10={table['cats1-4@10']:.3f}", flush=True)
        return
    everything = {}
    for mode in args.modes.split(","):
        results = run(data, mode, conversations)
        everything[mode] = results
        for name in ("default", "relevance"):
            table = results[name]
            cells = "  ".join(
                f"{key}={table[key]:.3f}" for key in sorted(table) if key != "questions1-4"
            )
            print(f"{mode:8} {name:9} n={table['questions1-4']}  {cells}")
        lat = results["latency_ms"]
        print(
            f"{mode:8} search p50 {lat['p50']:.1f} ms  p95 {lat['p95']:.1f} ms;"
            f" ingest+index {results['index_seconds']:.1f} s"
        )
    if args.json:
        args.json.write_text(json.dumps(everything, indent=2))


if __name__ == "__main__":
    main()
