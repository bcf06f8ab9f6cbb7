"""LoCoMo retrieval benchmark: does search put a question's evidence turns in the top k?

Protocol: one store per conversation; each turn is one event (``speaker: text``, plus
``[shares <caption>]`` when the turn shares an image), timestamped with its session's date,
with its ``dia_id`` as event id. Each question is searched with ``kinds: ["observation"]``;
recall@k is the share of the question's evidence ids among the primary event ids
(``eventIds[0]``) of the top k results. Reported per category at k = 5 and 10, lexical and
hybrid, with the default ranking weights and with relevance only.

``--ablation`` scores each step that got memvault's constants where they are. Those were
chosen on the conversations they are scored on; ``--cross-validate`` chooses them on one
half of the conversations (a grid over each constant, "off" included) and scores them on
the other half, and the reverse, against plain BM25 (every constant off) and the defaults.

The data set (non-commercial licence) is read where it lies, never copied:

    .venv/bin/python bench/locomo.py [--data ../shared/bench/locomo/locomo10.json]
        [--modes lexical,hybrid] [--conversations 0-9] [--json results.json]
        [--ablation | --cross-validate]
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
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np
from _server import bootstrap_difference, machine

from memvault import Memory
from memvault.search import documents, engine, indexer, ranking
from memvault.search import lexical as candidates
from memvault.search.query import parse
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
                if memory.index.semantic is not None:
                    memory.index.semantic.warm()
                memory.index.index_now()
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


# Each step of the ablation: what the index and the ranking use. The last, the session lift,
# is off since it did not survive --cross-validate; the one before is memvault's defaults.
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
    candidates.COLUMN_WEIGHTS = (1.0, 1.0, step["weight"], 0.5 if step["dates"] else 0.0)
    engine.ACTOR_BOOST = step["actor"]
    engine.SESSION_BOOST = step["session"]
    engine._MAX_FUSED = 1 + step["actor"] + step["session"] * (1 + step["actor"])
    documents.date_terms = _DATE_TERMS if step["dates"] else (lambda _: "")


_DATE_TERMS = documents.date_terms


# -- cross-validation -------------------------------------------------------------------

# The values each constant may take; the first of each is "off".
CV_WINDOWS = (0, 1, 2, 3)  # neighbouring turns either side indexed as context
CV_CONTEXT_WEIGHTS = (0.25, 0.5, 1.0)  # of the context column, when there is context
CV_DATE_WEIGHTS = (0.0, 0.25, 0.5, 1.0)  # of the date-words column; 0: none indexed
CV_SPEAKER = (0.0, 0.05, 0.1, 0.2)
CV_SESSION = (0.0, 0.1, 0.2, 0.4)
CONSTANTS = ("context", "dates", "speaker", "session")


class Constants(NamedTuple):
    window: int
    context: float  # weight of the context column (0 when window is 0)
    dates: float
    speaker: float
    session: float

    def without(self, name: str) -> Constants:
        if name == "context":
            return self._replace(window=0, context=0.0)
        return self._replace(**{name: 0.0})

    def has(self, name: str) -> bool:
        return self.window > 0 if name == "context" else getattr(self, name) > 0

    def describe(self) -> str:
        parts = [f"context ±{self.window} @{self.context:g}" if self.window else "no context"]
        parts.append(f"dates @{self.dates:g}" if self.dates else "no dates")
        parts.append(f"speaker +{self.speaker:g}" if self.speaker else "no speaker boost")
        parts.append(f"session ×{self.session:g}" if self.session else "no session boost")
        return ", ".join(parts)


BASELINE = Constants(0, 0.0, 0.0, 0.0, 0.0)  # plain BM25 over the turn, stopwords removed


def defaults() -> Constants:
    """The constants in the code now."""
    window = indexer.CONTEXT_BEFORE
    return Constants(
        window,
        candidates.COLUMN_WEIGHTS[2] if window else 0.0,
        candidates.COLUMN_WEIGHTS[3] if documents.date_terms is _DATE_TERMS else 0.0,
        engine.ACTOR_BOOST,
        engine.SESSION_BOOST,
    )


def grid() -> list[Constants]:
    """Every combination, simplest first (so a tie goes to the one with less switched on)."""
    out = []
    for window in CV_WINDOWS:
        for context in CV_CONTEXT_WEIGHTS if window else (0.0,):
            for dates in CV_DATE_WEIGHTS:
                for speaker in CV_SPEAKER:
                    for session in CV_SESSION:
                        out.append(Constants(window, context, dates, speaker, session))
    return sorted(out, key=lambda c: sum(c.has(n) for n in CONSTANTS))


# What the cross-validation changes while it runs, put back after it.
_CHANGED = (
    (indexer, "CONTEXT_BEFORE"),
    (indexer, "CONTEXT_AFTER"),
    (documents, "date_terms"),
    (candidates, "COLUMN_WEIGHTS"),
    (engine, "ACTOR_BOOST"),
    (engine, "SESSION_BOOST"),
    (engine, "_MAX_FUSED"),
)


def _saved() -> tuple:
    return tuple(getattr(module, name) for module, name in _CHANGED)


def _restore(saved: tuple) -> None:
    for (module, name), value in zip(_CHANGED, saved, strict=True):
        setattr(module, name, value)


def _index_constants(window: int, dates: bool) -> None:
    indexer.CONTEXT_BEFORE = indexer.CONTEXT_AFTER = window
    documents.date_terms = _DATE_TERMS if dates else (lambda _: "")


def _boosts(speaker: float, session: float) -> None:
    engine.ACTOR_BOOST = speaker
    engine.SESSION_BOOST = session
    engine._MAX_FUSED = 1 + speaker + session * (1 + speaker)


def _questions(sample: dict) -> list[dict]:
    return [qa for qa in sample["qa"] if qa.get("evidence") and qa["category"] in (1, 2, 3, 4)]


def _recall(ranked: list[int], docs: dict, evidence: set[str]) -> tuple[float, float]:
    primary = [docs[i].event_ids[0] for i in ranked if docs[i].event_ids]
    return tuple(len(evidence & set(primary[:k])) / len(evidence) for k in KS)


def _semantic_candidates(
    sample: dict, questions: list[dict]
) -> list[tuple[list[tuple[str, float]], dict[str, float]]]:
    """Each question's semantic candidates as (observation key, cosine), and every
    observation's cosine by key (what the searcher looks up for a lexical candidate outside
    that pool, ``Searcher._likeness``): they depend on the turn's own text only, so one
    embedded store serves every lexical variant."""
    with tempfile.TemporaryDirectory() as home, Memory.open(home=Path(home)) as memory:
        assert memory.observe_many(events(sample)).failed == 0
        memory.index.semantic.warm()
        memory.index.index_now()
        scope = candidates.Scope(kinds=["observation"], project=None, include_archived=False)
        every_id = memory.store.document_ids(
            kinds=["observation"], project=sample["sample_id"], include_archived=False
        )
        docs = memory.store.documents(every_id)
        out = []
        for qa in questions:
            found = memory.index.searcher._semantic(
                qa["question"], scope, {"observation": engine.CANDIDATES}
            )
            every = memory.index.semantic.likeness(qa["question"], every_id)
            out.append(
                (
                    [(docs[i].key, cosine) for i, cosine in found if i in docs],
                    {docs[i].key: cosine for i, cosine in every if i in docs},
                )
            )
        return out


def collect(data: list[dict], conversations: list[int], modes: list[str]) -> tuple[list, dict]:
    """Recall@5 and @10 of every question of categories 1–4 under every combination of
    the grid: the FTS5 query runs once per index and column weights, and the boosts are
    applied to its candidates the way the searcher applies them."""
    questions: list[tuple[int, int]] = []
    scores: dict[tuple[str, Constants], list] = defaultdict(list)
    combos = grid()
    for c in conversations:
        sample = data[c]
        asked = _questions(sample)
        questions += [(c, qa["category"]) for qa in asked]
        semantic = _semantic_candidates(sample, asked) if "hybrid" in modes else None
        here: dict[tuple[str, Constants], list] = defaultdict(list)
        for window in CV_WINDOWS:
            for dated in (False, True):
                _index_constants(window, dated)
                with (
                    tempfile.TemporaryDirectory() as home,
                    Memory.open(home=Path(home), embeddings="none") as memory,
                ):
                    assert memory.observe_many(events(sample)).failed == 0
                    memory.index.index_now()
                    _score_index(memory, asked, semantic, modes, window, dated, combos, here)
        for key, values in here.items():
            scores[key] += values
        print(f"  conversation {c}: {len(asked)} questions", file=sys.stderr, flush=True)
    return questions, {key: np.asarray(values) for key, values in scores.items()}


def _score_index(memory, asked, semantic, modes, window, dated, combos, here) -> None:
    docs: dict = {}
    ids: dict[str, int | None] = {}

    def doc_id(key: str) -> int | None:
        if key not in ids:
            found = memory.store.document("observation", key)
            ids[key] = found.id if found else None
        return ids[key]

    mine = [c for c in combos if c.window == window and (c.dates > 0) == dated]
    by_weights = defaultdict(list)
    for combo in mine:
        by_weights[(combo.context, combo.dates)].append(combo)
    for (context, dates), variants in by_weights.items():
        candidates.COLUMN_WEIGHTS = (1.0, 1.0, context, dates)
        for n, qa in enumerate(asked):
            query = parse(qa["question"])
            lexical = memory.index.searcher.lexical.together(
                query,
                candidates.Scope(kinds=["observation"], project=None, include_archived=False),
                pool=engine.CANDIDATES,
            )
            evidence = set(qa["evidence"])
            for mode in modes:
                found = []
                if mode == "hybrid":
                    pool, every = semantic[n]
                    found = [(doc_id(k), s) for k, s in pool if doc_id(k) is not None]
                    # Each lexical candidate weighed by its own cosine, as the searcher does.
                    pooled = {i for i, _ in found}
                    outside = [i for i, _ in lexical if i not in pooled]
                    docs.update(memory.store.documents([i for i in outside if i not in docs]))
                    found += [
                        (i, every[docs[i].key])
                        for i in outside
                        if i in docs and docs[i].key in every
                    ]
                fused, _, _ = ranking.fuse(lexical, found)
                missing = [i for i in fused if i not in docs]
                if missing:
                    docs.update(memory.store.documents(missing))
                for combo in variants:
                    _boosts(combo.speaker, combo.session)
                    relevance = engine.boost(fused, docs, set(query.terms))
                    ranked = sorted(relevance, key=relevance.get, reverse=True)[: max(KS)]
                    here[(mode, combo)].append(_recall(ranked, docs, evidence))


def cross_validate(data: list[dict], conversations: list[int], modes: list[str]) -> dict:
    half = len(conversations) // 2
    folds = [
        (conversations[:half], conversations[half:]),
        (conversations[half:], conversations[:half]),
    ]
    base = defaults()
    saved = _saved()
    try:
        questions, scores = collect(data, conversations, modes)
    finally:
        _restore(saved)
    of = np.asarray([c for c, _ in questions])
    report: dict = {"defaults": base.describe(), "modes": {}}
    for mode in modes:
        table = {key[1]: value for key, value in scores.items() if key[0] == mode}
        chosen_for: dict[int, Constants] = {}  # test conversation's first → its choice
        section: dict = {"folds": []}
        held_out = np.zeros((len(questions), 2))
        for train, test in folds:
            train_mask, test_mask = np.isin(of, train), np.isin(of, test)
            chosen = max(table, key=lambda combo: table[combo][train_mask, 1].mean())
            chosen_for[test[0]] = chosen
            held_out[test_mask] = table[chosen][test_mask]
            fold = {
                "train": f"{train[0]}-{train[-1]}",
                "test": f"{test[0]}-{test[-1]}",
                "constants": chosen.describe(),
                "train@10": float(table[chosen][train_mask, 1].mean()),
            }
            for name, combo in (("baseline", BASELINE), ("defaults", base), ("chosen", chosen)):
                fold[name] = [float(v) for v in table[combo][test_mask].mean(axis=0)]
            section["folds"].append(fold)
        pooled = {
            "baseline": table[BASELINE],
            "defaults": table[base],
            "cross-validated": held_out,
        }
        section["pooled"] = {name: [float(v) for v in s.mean(axis=0)] for name, s in pooled.items()}
        section["vs baseline @10"] = {
            name: bootstrap_difference(s[:, 1], table[BASELINE][:, 1])
            for name, s in pooled.items()
            if name != "baseline"
        }
        # What each constant adds on conversations it was not chosen on: the chosen
        # combination against the same without that constant, question by question.
        section["constants"] = {}
        for name in CONSTANTS:
            without = np.zeros_like(held_out)
            for _, test in folds:
                mask = np.isin(of, test)
                without[mask] = table[chosen_for[test[0]].without(name)][mask]
            section["constants"][name] = {
                "cross-validated": bootstrap_difference(held_out[:, 1], without[:, 1]),
                "defaults": bootstrap_difference(
                    table[base][:, 1], table[base.without(name)][:, 1]
                ),
            }
        report["modes"][mode] = section
    return report


def print_cross_validation(report: dict) -> None:
    print(f"defaults: {report['defaults']}")
    for mode, section in report["modes"].items():
        for fold in section["folds"]:
            cells = "  ".join(
                f"{name} {fold[name][0]:.3f}/{fold[name][1]:.3f}"
                for name in ("baseline", "defaults", "chosen")
            )
            print(
                f"{mode:8} chosen on {fold['train']} (@10 {fold['train@10']:.3f}):"
                f" {fold['constants']}"
                f"\n{mode:8}   scored on {fold['test']}, recall@5/@10: {cells}"
            )
        cells = "  ".join(f"{name} {v[0]:.3f}/{v[1]:.3f}" for name, v in section["pooled"].items())
        print(f"{mode:8} every conversation out of fold, recall@5/@10: {cells}")
        for name, paired in section["vs baseline @10"].items():
            print(f"{mode:8}   {name} − baseline @10: {_gain(paired)}")
        for name, gains in section["constants"].items():
            cv, fixed = gains["cross-validated"], gains["defaults"]
            verdict = "keeps" if cv[1] > 0 else "goes"
            print(
                f"{mode:8}   {name:8} adds @10 out of fold {_gain(cv)},"
                f" to the defaults {_gain(fixed)}: {verdict}"
            )


def _gain(paired: tuple[float, float, float]) -> str:
    mean, low, high = paired
    return f"{mean:+.3f} (95% {low:+.3f} … {high:+.3f})"


def main() -> None:
    global CV_WINDOWS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--modes", default="lexical,hybrid")
    parser.add_argument("--conversations", default="0-9")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--ablation", action="store_true", help="recall@10 of each step that got memvault here"
    )
    parser.add_argument(
        "--cross-validate",
        action="store_true",
        help="choose the constants on one half of the conversations, score the other half",
    )
    parser.add_argument(
        "--windows",
        default=",".join(map(str, CV_WINDOWS)),
        help="the context windows the cross-validation's grid tries (0 is none)",
    )
    args = parser.parse_args()
    CV_WINDOWS = tuple(int(w) for w in args.windows.split(","))
    if not args.data.exists():
        sys.exit(f"LoCoMo data not found at {args.data}: pass --data")
    data = json.loads(args.data.read_text())
    first, _, last = args.conversations.partition("-")
    conversations = list(range(int(first), int(last or first) + 1))
    print(f"LoCoMo retrieval, conversations {args.conversations} — {machine()}")
    if args.cross_validate:
        report = cross_validate(data, conversations, args.modes.split(","))
        print_cross_validation(report)
        if args.json:
            args.json.write_text(json.dumps(report, indent=2))
        return
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
