"""The prompt block's constants, chosen by cross-validation across three data sets.

What a prompt block holds is decided by a few constants: the relevance floor (the weighed
share of the request's words a memory must hold, ``MATCHED_FLOOR``) and the focus on the
sessions the request is most about (``FOCUS_SESSIONS``, ``FOCUS_RATIO``). This script asks
every question of three data sets once, keeps the candidates search found for it, and then
packs the block for each setting of a grid exactly as ``Memory.context`` would (the same
functions: the floor, the session filters, ``focus.focused``, ``pack``), lexical:

- ``real``: the real coding sessions of ``../shared/bench/coding-sessions`` (history
  ingested and run through the offline pipeline; 28 labelled requests, 60 controls from
  other projects);
- ``coding``: ``bench/data/coding_sessions.json`` (62 questions; no controls);
- ``locomo``: LoCoMo (``../shared/bench/locomo``), each conversation a project; questions of
  categories 1–4 (``--locomo-questions`` of each conversation), and as controls the same
  number of the next conversation's questions asked in this one's project.

Per question: the share of its relevant sessions the block draws on, the block's lines and
how many come from a relevant session, and for a control whether the block is empty. A
data set's utility is the mean of its draws, its lines' precision (pooled) and its controls'
silence (those it has). Folds: each data set held out in turn, the setting chosen on the
other two (best mean utility), scored on the held-out one against the block before the
focus (``TODAY``), with a paired bootstrap 95 % interval over its questions. The setting
kept is the best on all three that lowers no data set's utility:

    .venv/bin/python bench/floors.py [--locomo-questions 40] [--json out.json]
        [--candidates FILE]

``--same-lines`` cross-validates one constant more the same way: how alike two of a
block's activity lines may be before the second is not told (``packing.SAME_LINE``).
``--rivals`` does the same for how many sessions holding a request about as fully as the
best placed one, and how much less of it, make the request single none out
(``focus.RIVALS``, ``focus.RIVAL_GAP``); ``--close-rivals --hybrid`` for how many sessions
with a hit close in meaning, or nearly as close as the best placed one's, do
(``focus.CLOSE_RIVALS``, ``focus.CLOSE_GAP``). ``--rules`` tries two rules on and
off: a fragment an agent said once in passing told only with a session it came from, and a
session writing the request's code names whole counted for more in the focus.
Each mode is run apart (``--hybrid``); a constant both modes share is kept where it lowers
none of the six utilities.
"""

from __future__ import annotations

import argparse
import itertools
import json
import pickle
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).parent))

import coding
import locomo
import real_sessions
from _server import machine

from memvault import Memory
from memvault.memory import context as contexts
from memvault.memory import telling
from memvault.search import context as packing
from memvault.search import focus
from memvault.search.engine import Hit, one_per_session

BUDGET = 1500
BOOTSTRAP = 1000
FLOORS = (0.24, 0.28, 0.32, 0.36, 0.4, 0.45)
SESSIONS = (0, 1, 2, 3)  # 0: no focus
SESSION_FLOORS = (0.2, 0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7)
COSINES = (0.45, 0.5, 0.55, 0.6, 0.7, 1.01)  # with vectors; 1.01: never by the cosine


class Setting(NamedTuple):
    floor: float  # a memory's own share (fragments; every memory without focus)
    most: int  # sessions told, 0: no focus
    session: float  # a session's hits' share together
    cosine: float = packing.SEMANTIC_FLOOR  # with vectors: a hit this close passes
    same: float = packing.SAME_LINE  # activity lines this alike are told once (inf: off)
    rivals: int = focus.RIVALS  # sessions holding a request alike: none is told (0: off)
    gap: float = focus.RIVAL_GAP  # how much less of it a rival may hold
    close_rivals: int = focus.CLOSE_RIVALS  # sessions close in meaning: none is told (0: off)
    close_gap: float = focus.CLOSE_GAP  # or nearly as close as the best placed one
    passing: bool = True  # an agent's passing statement told only with its session
    names: bool = True  # a session writing the request's code names whole counts more

    def describe(self) -> str:
        focus_part = f"{self.most} sessions from {self.session:g}" if self.most else "no focus"
        return f"floor {self.floor:g}, {focus_part}, cosine {self.cosine:g}"


# The block before the focus: every memory held to the floor alone, which was 0.28.
TODAY = Setting(0.28, 0, 0.0)


@dataclass
class Asked:
    """One question's candidates, as the block's code sees them after search."""

    relevant: set[str]  # host sessions; empty for a control
    lists: dict[str, list[Hit]]
    shares: dict[int, float]
    links: dict[str, str]
    sources: dict[int, set[str]] = field(default_factory=dict)  # document id → host sessions
    weights: dict[str, float] = field(default_factory=dict)  # the request's terms, weighed
    held: dict[int, frozenset[str]] = field(default_factory=dict)  # document id → its terms
    request: str = ""
    project: str | None = None


def candidates(memory: Memory, project: str, query: str, trace) -> Asked:
    """Search once, as ``Context.context`` does, and keep every candidate's share."""
    context = memory.context
    found = context.index.searcher.find(query, contexts.CONTEXT_QUOTAS, project=project)
    weights, held = context._reading(found.query)
    lists = {kind: list(found[kind]) for kind in contexts.CONTEXT_QUOTAS}
    links = context._links()
    every = [hit for hits in lists.values() for hit in hits]
    return Asked(
        set(),
        lists,
        {hit.document.id: packing.covered(weights, held(hit)) for hit in every},
        links,
        {hit.document.id: trace(hit.document, links) for hit in every},
        weights,
        {hit.document.id: held(hit) for hit in every},
        query,
        project,
    )


def block(asked: Asked, setting: Setting) -> list[set[str]]:
    """The block ``setting`` packs for ``asked``: each memory line's source sessions."""
    found = [asked.lists[kind] for kind in contexts.CONTEXT_QUOTAS]
    if setting.most:
        fragments, told, observations = telling.prompt_hits(
            found,
            asked.weights,
            lambda h: asked.held[h.document.id],
            asked.links,
            floor=setting.floor,
            most=setting.most,
            session_floor=setting.session,
            cosine=setting.cosine,
            same=setting.same,
            rivals=setting.rivals or sys.maxsize,
            rival_gap=setting.gap,
            close_rivals=setting.close_rivals or sys.maxsize,
            close_gap=setting.close_gap,
            passing=setting.passing,
            request=asked.request if setting.names else "",
            project=asked.project,
        )
    else:  # as the block was made before the focus: every list held to the floor
        fragments, summaries, sessions, observations = (
            [
                h
                for h in hits
                if asked.shares[h.document.id] >= setting.floor
                or (h.semantic is not None and h.semantic >= setting.cosine)
            ]
            for hits in found
        )
        summaries, sessions = (
            [h for h in hits if telling.tellable_summary(h.document, None)]
            for hits in (summaries, sessions)
        )
        observations = [h for h in observations if telling.tellable_observation(h.document, None)]
        told = one_per_session(
            sorted([*summaries, *sessions], key=lambda h: h.score, reverse=True)
        )[: telling.SESSIONS_TOLD]
    packed = packing.pack(
        fragments,
        told,
        observations[: telling.OBSERVATIONS_TOLD],
        budget=BUDGET,
        searched=True,
    )
    by_key = {(h.document.kind, h.document.key): h for hits in asked.lists.values() for h in hits}
    return [
        asked.sources[by_key[(b["kind"], b["id"])].document.id]
        for b in packed.items()
        if (b["kind"], b["id"]) in by_key
    ]


class Figures(NamedTuple):
    draws: list[float]  # per labelled question
    lines: list[tuple[int, int]]  # per labelled question: relevant lines, lines
    silent: list[float]  # per control

    def utility(self) -> float:
        parts = [statistics.fmean(self.draws)]
        relevant, total = sum(r for r, _ in self.lines), sum(t for _, t in self.lines)
        parts.append(relevant / total if total else 0.0)
        if self.silent:
            parts.append(statistics.fmean(self.silent))
        return statistics.fmean(parts)

    def precision(self) -> float:
        total = sum(t for _, t in self.lines)
        return sum(r for r, _ in self.lines) / total if total else 0.0


def figures(asked: list[Asked], setting: Setting) -> Figures:
    draws, lines, silent = [], [], []
    for question in asked:
        items = block(question, setting)
        if not question.relevant:
            silent.append(float(not items))
            continue
        drawn = set().union(*items) if items else set()
        draws.append(len(drawn & question.relevant) / len(question.relevant))
        lines.append((sum(bool(s & question.relevant) for s in items), len(items)))
    return Figures(draws, lines, silent)


def resampled(result: Figures, rng: random.Random) -> Figures:
    labelled = [rng.randrange(len(result.draws)) for _ in result.draws]
    controls = [rng.randrange(len(result.silent)) for _ in result.silent]
    return Figures(
        [result.draws[i] for i in labelled],
        [result.lines[i] for i in labelled],
        [result.silent[i] for i in controls],
    )


def paired_interval(base: Figures, chosen: Figures, seed: int = 7) -> tuple[float, float]:
    """95 % bootstrap interval of ``chosen``'s utility minus ``base``'s, the same questions
    resampled for both."""
    rng = random.Random(seed)
    gains = []
    for _ in range(BOOTSTRAP):
        state = rng.getstate()
        a = resampled(base, rng)
        rng.setstate(state)
        b = resampled(chosen, rng)
        gains.append(b.utility() - a.utility())
    gains.sort()
    return gains[int(0.025 * BOOTSTRAP)], gains[int(0.975 * BOOTSTRAP) - 1]


# -- the three data sets ------------------------------------------------------------------


def by_events(memory: Memory, project_events: dict[tuple[str, str], str]):
    """A tracer: a document's host sessions, by its events (a fragment's), or its own."""

    def trace(document, links: dict[str, str]) -> set[str]:
        named = {
            project_events[(document.project or "", e)]
            for e in document.event_ids
            if (document.project or "", e) in project_events
        }
        if named:
            return named
        source = focus.session_of(Hit(document, 0, 0, 0, 0), links)
        return {source} if source else set()

    return trace


def ingest(memory: Memory, sessions: list[list[dict]], pipeline: bool) -> dict:
    """Every session's events in, each session summarized and mined (``pipeline``), indexed;
    (project, event id) → host session."""
    project_events = {}
    for events in sessions:
        result = memory.observe_many(events)
        assert result.failed == 0, result.errors[:3]
        for event in events:
            project_events[(event["project"], event["eventId"])] = event["sessionId"]
    if pipeline:
        for session in memory.reads.sessions(limit=10_000):
            if memory.board.needs_board_row(session.id):
                memory.board.register_from_event(session.id, None)
            memory.pipeline.summarize_session(session.id)
            memory.pipeline.extract_session(session.id)
    memory.index.index_now()
    return project_events


def real_set(memory: Memory, data: Path) -> list[Asked]:
    history, questions = real_sessions.load(data, None)
    ordered = sorted(
        (s for group in history.values() for s in group), key=lambda s: (s["started"], s["id"])
    )
    trace = by_events(memory, ingest(memory, [s["events"] for s in ordered], pipeline=True))
    out = []
    for question in questions:
        asked = candidates(memory, question["project"], real_sessions.asked(question), trace)
        asked.relevant = set(question["relevant"])
        out.append(asked)
    return out


def coding_set(memory: Memory) -> list[Asked]:
    data = json.loads(coding.DATA.read_text())
    coding.build(memory, data["sessions"], sorted(coding.FIXTURES.glob("*.jsonl")))
    projects = {s["id"]: s["project"] for s in data["sessions"]}

    def trace(document, links: dict[str, str]) -> set[str]:
        named = {e.split(":", 1)[0] for e in document.event_ids if ":" in e}
        source = focus.session_of(Hit(document, 0, 0, 0, 0), links)
        return named or ({source} if source else set())

    out = []
    for question in data["questions"]:
        session = question["answers"][0].split(":", 1)[0]
        asked = candidates(memory, projects[session], question["q"], trace)
        asked.relevant = {a.split(":", 1)[0] for a in question["answers"]}
        out.append(asked)
    return out


def locomo_set(memory: Memory, data: Path, per: int) -> list[Asked]:
    samples = json.loads(data.read_text())
    project_events = ingest(memory, [locomo.events(s) for s in samples], pipeline=False)
    trace = by_events(memory, project_events)

    def labelled(sample: dict) -> list[dict]:
        return [q for q in sample["qa"] if q.get("evidence") and q["category"] in (1, 2, 3, 4)]

    out = []
    for n, sample in enumerate(samples):
        project = sample["sample_id"]
        for qa in labelled(sample)[:per]:
            asked = candidates(memory, project, qa["question"], trace)
            asked.relevant = {
                f"{project}-session-{e.split(':')[0][1:]}" for e in qa["evidence"] if ":" in e
            }
            out.append(asked)
        other = samples[(n + 1) % len(samples)]
        for qa in labelled(other)[:per]:
            out.append(candidates(memory, project, qa["question"], trace))
    return out


def collect(args) -> dict[str, list[Asked]]:
    """Every question's candidates, per data set: read from ``--candidates`` when that file
    was written by a run in the same mode, else collected (and written there, if named)."""
    mode = "hybrid" if args.hybrid else "lexical"
    if args.candidates is not None and args.candidates.exists():
        with args.candidates.open("rb") as saved:
            kept = pickle.load(saved)  # a file this script wrote: local, trusted
        if kept.get("mode") != mode:
            sys.exit(f"{args.candidates} holds {kept.get('mode')} candidates; this run is {mode}")
        print(f"candidates read from {args.candidates}", flush=True)
        return kept["sets"]
    sets = _collected(args)
    if args.candidates is not None:
        with args.candidates.open("wb") as out:
            pickle.dump({"mode": mode, "sets": sets}, out)
    return sets


def _collected(args) -> dict[str, list[Asked]]:
    sets = {}
    builders = {
        "real": lambda m: real_set(m, args.real),
        "coding": coding_set,
        "locomo": lambda m: locomo_set(m, args.locomo, args.locomo_questions),
    }
    for name, build in builders.items():
        started = time.perf_counter()
        with (
            tempfile.TemporaryDirectory() as home,
            Memory.open(home=Path(home), embeddings=args.embeddings, llm="none") as memory,
        ):
            sets[name] = build(memory)
        labelled = sum(bool(a.relevant) for a in sets[name])
        print(
            f"{name}: {labelled} labelled, {len(sets[name]) - labelled} controls"
            f" ({time.perf_counter() - started:.0f} s)",
            flush=True,
        )
    return sets


# -- cross-validation ---------------------------------------------------------------------


def grid(cosines: tuple[float, ...] = (packing.SEMANTIC_FLOOR,)) -> list[Setting]:
    out = []
    for floor, most, cosine in itertools.product(FLOORS, SESSIONS, cosines):
        for session in SESSION_FLOORS if most else (0.0,):
            out.append(Setting(floor, most, session, cosine))
    return out


def show(name: str, result: Figures) -> str:
    silent = f", silent {statistics.fmean(result.silent):.2f}" if result.silent else ""
    lines = sum(t for _, t in result.lines)
    return (
        f"{name}: draws {statistics.fmean(result.draws):.2f}, lines relevant"
        f" {result.precision():.2f} ({lines}){silent}; utility {result.utility():.3f}"
    )


def folds(scored: dict[str, dict], options, base) -> list[tuple[str, object, Figures, Figures]]:
    """Each data set held out in turn: the option (of ``options``, keys of each set's
    ``scored``) with the best mean utility on the others, and the held-out set's figures
    with ``base`` and with that option."""
    out = []
    for held in scored:
        trained = [name for name in scored if name != held]
        chosen = max(
            options, key=lambda o: statistics.fmean(scored[n][o].utility() for n in trained)
        )
        out.append((held, chosen, scored[held][base], scored[held][chosen]))
    return out


def cross_validate(sets: dict[str, list[Asked]], *, hybrid: bool = False) -> dict:
    settings = grid(COSINES if hybrid else (packing.SEMANTIC_FLOOR,))
    scored = {
        name: {setting: figures(asked, setting) for setting in settings}
        for name, asked in sets.items()
    }
    report: dict = {"folds": [], "grid": len(settings)}
    for held, chosen, base, got in folds(scored, settings, TODAY):
        report["folds"].append(
            {
                "held_out": held,
                "chosen": chosen.describe(),
                "before": show(held, base),
                "with_chosen": show(held, got),
                "gain": got.utility() - base.utility(),
                "interval": list(paired_interval(base, got)),
            }
        )

    def admissible(setting: Setting) -> bool:
        return all(scored[n][setting].utility() >= scored[n][TODAY].utility() - 1e-9 for n in sets)

    kept = max(
        [s for s in settings if admissible(s)] or [TODAY],
        key=lambda s: statistics.fmean(scored[n][s].utility() for n in sets),
    )
    report["kept"] = kept.describe()
    report["sets"] = {
        name: {
            "before": show(name, scored[name][TODAY]),
            "kept": show(name, scored[name][kept]),
            "interval": paired_interval(scored[name][TODAY], scored[name][kept]),
        }
        for name in sets
    }
    report["curve"] = {
        name: {
            s.describe(): round(scored[name][s].utility(), 3)
            for s in settings
            if s.most in (0, kept.most) and s.floor == kept.floor
        }
        for name in sets
    }
    return report


SAME_LINES = (0.95, 0.9, 0.85, 0.8, 0.7, 0.6)


def same_lines(sets: dict[str, list[Asked]], *, hybrid: bool = False) -> None:
    """``packing.SAME_LINE``, cross-validated as the constants above are, against telling
    every line (the focus as it is kept: ``focus``' constants)."""
    session = focus.SESSION_FLOOR_WITH_VECTORS if hybrid else focus.SESSION_FLOOR
    cosine = focus.COSINE if hybrid else packing.SEMANTIC_FLOOR

    def setting(same: float) -> Setting:
        return Setting(packing.MATCHED_FLOOR, focus.FOCUS_SESSIONS, session, cosine, same)

    off = float("inf")
    tried(
        sets,
        (off, *SAME_LINES),
        setting,
        off,
        lambda same: "every line told" if same == off else f"same line {same:g}",
    )


def tried(sets: dict[str, list[Asked]], options, setting, off, named) -> dict:
    """Every option's figures on every set (``setting``: the option's ``Setting``), and
    each set held out in turn against ``off``, printed (``named``: an option's name);
    the figures, by set and option."""
    scored = {
        name: {option: figures(asked, setting(option)) for option in options}
        for name, asked in sets.items()
    }
    for option in options:
        print(f"{named(option)}: " + "; ".join(show(name, scored[name][option]) for name in sets))
    for held, chosen, base, got in folds(scored, options, off):
        low, high = paired_interval(base, got)
        print(
            f"held out {held}: chose {named(chosen)}, utility {base.utility():.3f} →"
            f" {got.utility():.3f} (95 % {low:+.3f} … {high:+.3f})"
        )
    return scored


def kept_lowering_none(scored: dict[str, dict], options, off) -> None:
    """Print the option (of ``options``, keys of each set's ``scored``) best on all the
    sets among those that lower no set's utility against ``off``, with its intervals."""
    lowering_none = [
        o
        for o in options
        if all(scored[n][o].utility() >= scored[n][off].utility() - 1e-9 for n in scored)
    ]
    kept = max(
        lowering_none, key=lambda o: statistics.fmean(scored[n][o].utility() for n in scored)
    )
    print(f"kept (best on all three, lowering none): {kept}")
    for name in scored:
        low, high = paired_interval(scored[name][off], scored[name][kept])
        print(f"  {show(name, scored[name][kept])} (95 % {low:+.3f} … {high:+.3f})")


RIVALS = (2, 3, 4, 5)
RIVAL_GAPS = (0.0, 0.05, 0.1, 0.15, 0.2)


def rivals(sets: dict[str, list[Asked]], *, hybrid: bool = False) -> None:
    """``focus.RIVALS`` and ``focus.RIVAL_GAP`` (how many sessions holding a request about
    as fully as the best placed one make it single none out), cross-validated as the
    constants above are, against no such test (the focus as it is kept otherwise)."""
    session = focus.SESSION_FLOOR_WITH_VECTORS if hybrid else focus.SESSION_FLOOR
    cosine = focus.COSINE if hybrid else packing.SEMANTIC_FLOOR

    def setting(option: tuple[int, float]) -> Setting:
        most, gap = option
        return Setting(
            packing.MATCHED_FLOOR, focus.FOCUS_SESSIONS, session, cosine, rivals=most, gap=gap
        )

    off = (0, 0.0)
    options = (off, *itertools.product(RIVALS, RIVAL_GAPS))
    scored = tried(
        sets,
        options,
        setting,
        off,
        lambda o: "no rival test" if o == off else f"{o[0]} rivals within {o[1]:g}",
    )
    kept_lowering_none(scored, options, off)


CLOSE_RIVALS = (2, 3, 4, 5)
CLOSE_GAPS = (0.0, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2)


def close_rivals(sets: dict[str, list[Asked]]) -> None:
    """``focus.CLOSE_RIVALS`` and ``focus.CLOSE_GAP`` (how many sessions with a hit close
    in meaning, or nearly as close as the best placed one's, make a request single none out
    when the session it would tell of is close in meaning alone), cross-validated as the
    constants above are, against no such test. Only vectors make a hit close: run with
    ``--hybrid``."""

    def setting(option: tuple[int, float]) -> Setting:
        most, gap = option
        return Setting(
            packing.MATCHED_FLOOR,
            focus.FOCUS_SESSIONS,
            focus.SESSION_FLOOR_WITH_VECTORS,
            focus.COSINE,
            close_rivals=most,
            close_gap=gap,
        )

    def named(option: tuple[int, float]) -> str:
        most, gap = option
        if not most:
            return "no test in meaning"
        return f"{most} sessions close in meaning" + (f" or within {gap:g}" if gap else "")

    off = (0, 0.0)
    options = (off, *itertools.product(CLOSE_RIVALS, CLOSE_GAPS))
    scored = tried(sets, options, setting, off, named)
    kept_lowering_none(scored, options, off)


def rules(sets: dict[str, list[Asked]], *, hybrid: bool = False) -> None:
    """Two rules of the focus, each on and off (the focus as it is kept otherwise): a
    fragment an agent said once in passing (``derive.fragments.UNCONFIRMED``) told only with
    a session it came from, or as any other fragment; a session whose hits write the
    request's code names whole counted for more when sessions are ranked, or ranked by its
    hits and their share alone."""
    session = focus.SESSION_FLOOR_WITH_VECTORS if hybrid else focus.SESSION_FLOOR
    cosine = focus.COSINE if hybrid else packing.SEMANTIC_FLOOR

    def setting(option: tuple[bool, bool]) -> Setting:
        with_session, whole = option
        return Setting(
            packing.MATCHED_FLOOR,
            focus.FOCUS_SESSIONS,
            session,
            cosine,
            passing=with_session,
            names=whole,
        )

    def named(option: tuple[bool, bool]) -> str:
        with_session, whole = option
        return (
            f"passing statements {'with their session' if with_session else 'as any fragment'},"
            f" code names {'counted' if whole else 'not counted'}"
        )

    off = (False, False)
    options = (off, (True, False), (False, True), (True, True))
    scored = tried(sets, options, setting, off, named)
    kept_lowering_none(scored, options, off)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--real", type=Path, default=real_sessions.DATA)
    parser.add_argument("--locomo", type=Path, default=locomo.DEFAULT_DATA)
    parser.add_argument("--locomo-questions", type=int, default=40)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--candidates",
        type=Path,
        help="keep the collected candidates in FILE, or read them from it when it is there:"
        " trying another grid takes seconds instead of collecting again (search unchanged)",
    )
    parser.add_argument(
        "--hybrid",
        action="store_true",
        help="with the default local embedder (every set embedded first: about 30 minutes)",
    )
    parser.add_argument(
        "--same-lines",
        action="store_true",
        help="cross-validate only how alike two activity lines may be before one is dropped",
    )
    parser.add_argument(
        "--rivals",
        action="store_true",
        help="cross-validate only how many sessions alike make a request single none out",
    )
    parser.add_argument(
        "--close-rivals",
        action="store_true",
        help="cross-validate only how many sessions close in meaning single none out (--hybrid)",
    )
    parser.add_argument(
        "--rules",
        action="store_true",
        help="an agent's passing statements with their session; code names written whole",
    )
    args = parser.parse_args()
    if args.close_rivals and not args.hybrid:
        parser.error("--close-rivals needs --hybrid: only vectors make a hit close in meaning")
    args.embeddings = "local" if args.hybrid else "none"
    for path in (args.real, args.locomo):
        if not path.exists():
            sys.exit(f"{path} is not here: this benchmark reads ../shared/bench/")
    mode = "hybrid" if args.hybrid else "lexical"
    print(f"prompt-block constants, cross-validated ({mode}) — {machine()}", flush=True)
    if args.same_lines:
        same_lines(collect(args), hybrid=args.hybrid)
        return
    if args.rivals:
        rivals(collect(args), hybrid=args.hybrid)
        return
    if args.close_rivals:
        close_rivals(collect(args))
        return
    if args.rules:
        rules(collect(args), hybrid=args.hybrid)
        return
    report = cross_validate(collect(args), hybrid=args.hybrid)
    for fold in report["folds"]:
        low, high = fold["interval"]
        print(
            f"held out {fold['held_out']}: chose {fold['chosen']}\n"
            f"  before  {fold['before']}\n  chosen  {fold['with_chosen']}\n"
            f"  gain {fold['gain']:+.3f} (95 % {low:+.3f} … {high:+.3f})"
        )
    print(f"kept (best on all three, lowering none): {report['kept']}")
    for cells in report["sets"].values():
        low, high = cells["interval"]
        print(f"  {cells['before']}\n  → {cells['kept']} (95 % {low:+.3f} … {high:+.3f})")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str))


if __name__ == "__main__":
    main()
