"""Real coding sessions: does a running server hand a new session's agent the right memory
from the project's earlier sessions? memvault (default and lexical) beside plain BM25.

The data is the coding-sessions set beside the repository (``../shared/bench/coding-sessions/``,
its README is the dataset card; never copied into the project, its licences vary): real
Cursor sessions of five public projects as hook events, split per project into history
(the first 60 % by start time) and later sessions, whose requests are the questions.

Protocol, for each mode (a real ``memvault serve`` on a loopback port with a temporary
home; lexical = ``MEMVAULT_EMBEDDINGS=none``, default = the server's own defaults):

- ingest the history as the hooks would have sent it: per session, in start-time order,
  ``POST /agentmemory/session/start``, then its events through ``/observe/bulk``; then wait
  until health says the index is caught up, every document embedded and no job or write
  pending (the time from the first request to then is *caught up*; ``--ask-when-indexed``
  asks as soon as every event is indexed instead, as a session starting right away would);
- ask each question as the Claude Code hook asks at a new session's first prompt:
  ``/session/start`` (the SessionStart block), ``/context`` with the request as the query
  and ``hookEvent: UserPromptSubmit`` (the prompt block), and ``/search`` (limit 30) for a
  ranking. The request is not posted as an event.

Every search result and injected memory is traced to the sessions its events came from
(``eventIds`` are ``<sessionId>:<n>``). Plain BM25 (k1 1.2, b 0.75) ranks the same history
with memvault's own tokenizer, one document per session and one per event (a session
ranked by its best event), in the same run.

    .venv/bin/python bench/real_sessions.py [--data DIR] [--lexical-only | --default-only]
        [--projects blastmerge,docgen] [--limit N] [--wait SECONDS] [--ask-when-indexed]
        [--history-share 0.6] [--as-lived] [--json PATH] [--keep DIR | --from-kept DIR]

``--as-lived`` moves each project's history to end an hour before the run, so recency weighs
as it would for a project's next session; replayed as recorded, the history is months old.
``--history-share`` moves the split, for questions labelled at another one
(``bench/wider_files.py``); a kept home holds the history of the split it was kept at.
``--from-kept DIR`` asks the questions again of a copy of the homes ``--keep`` left, without
ingesting: what a change to reading does, in under a minute. What is derived at ingest
needs a whole run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath

sys.path.insert(0, str(Path(__file__).parent))

from _server import (
    bootstrap_difference,
    health,
    kept_copy,
    machine,
    percentile,
    running_server,
)

from memvault.analyzer import estimate_tokens, tokens
from memvault.domain import iso, parse_timestamp
from memvault.hook.envelope import QUERY_LIMIT, stripped
from memvault.search.context import MEMORY_KINDS

DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "coding-sessions"
HISTORY_SHARE = 0.6
KS = (5, 10)
SEARCH_LIMIT = 30
BULK_EVENTS = 500
BULK_BYTES = 512 * 1024  # well under the server's 1 MiB body limit
# Lexical first: its figures come in minutes, the embedder's can take an hour on 2 cores.
MODES = {"lexical": {"MEMVAULT_EMBEDDINGS": "none"}, "default": {}}
SYSTEMS = ("default", "lexical", "bm25-session", "bm25-event")


# -- the data -----------------------------------------------------------------------------


def load(
    data: Path, projects: set[str] | None, share: float = HISTORY_SHARE
) -> tuple[dict[str, list[dict]], list[dict]]:
    """Per project its history sessions (start-time order), and the questions asked in the
    chosen projects."""
    history = {
        project: split(group, share)[0] for project, group in by_project(data, projects).items()
    }
    questions = json.loads((data / "queries.json").read_text(encoding="utf-8"))
    return history, [q for q in questions if q["project"] in history]


def by_project(data: Path, projects: set[str] | None = None) -> dict[str, list[dict]]:
    """The sessions of ``data`` (of ``projects``, when given) per project, in start-time
    order."""
    groups: dict[str, list[dict]] = defaultdict(list)
    with (data / "sessions.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            session = json.loads(line)
            if projects is None or session["project"] in projects:
                groups[session["project"]].append(session)
    for group in groups.values():
        group.sort(key=lambda s: (s["started"], s["id"]))
    return dict(groups)


def split(group: list[dict], share: float = HISTORY_SHARE) -> tuple[list[dict], list[dict]]:
    """A project's sessions (start-time order) as its history, the first ``share`` (the
    card's 60 % unless told), and its later sessions, whose requests are the questions."""
    cut = max(1, round(len(group) * share))
    return group[:cut], group[cut:]


def as_lived(history: dict[str, list[dict]], now: datetime) -> dict[str, list[dict]]:
    """Each project's history moved in time so that its newest event is an hour before
    ``now``, every gap between its events kept: what a server holds when a project's next
    session starts right after its history was lived. Replayed as recorded, a history is
    months old and recency weighs nothing in it."""

    def at(text: str) -> datetime:
        when = parse_timestamp(text)
        if when is None:
            raise ValueError(f"the data set has a time that is not ISO-8601: {text!r}")
        return when

    def moved(group: list[dict]) -> list[dict]:
        shift = (
            now - timedelta(hours=1) - max(at(e["timestamp"]) for s in group for e in s["events"])
        )

        return [
            {
                **session,
                "started": iso(at(session["started"]) + shift),
                "events": [
                    {**e, "timestamp": iso(at(e["timestamp"]) + shift)} for e in session["events"]
                ],
            }
            for session in group
        ]

    return {project: moved(group) for project, group in history.items()}


def need_data(parser: argparse.ArgumentParser, data: Path, *names: str) -> None:
    """Stop with an error naming ``data`` unless it holds every one of ``names`` (the
    coding-sessions set stays outside the repository)."""
    if not all((data / name).is_file() for name in names):
        listed = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
        parser.error(
            f"--data {data}: no {listed} there (the coding-sessions set, which stays outside"
            " the repository: see bench/real_sessions.py's doc)"
        )


def share_option(parser: argparse.ArgumentParser, default: float = HISTORY_SHARE) -> None:
    """``--history-share``: the share of each project's sessions that is history, refused
    outside 0–1. Questions and the history they are asked of must be split alike."""

    class Share(argparse.Action):
        def __call__(self, parser, namespace, value, option_string=None) -> None:
            if not 0 < value < 1:
                parser.error(f"--history-share {value:g}: give a share between 0 and 1")
            setattr(namespace, self.dest, value)

    parser.add_argument(
        "--history-share",
        type=float,
        action=Share,
        default=default,
        help=f"the share of each project's sessions that is history (default {default}; the"
        " card's is 0.6): questions and the history they are asked of are split alike",
    )


def written(out: Path, data: Path, questions: list[dict]) -> Path:
    """``questions`` as ``OUT/queries.json`` beside a link to ``data``'s sessions, the form
    ``--data OUT`` reads; the file written."""
    out.mkdir(parents=True, exist_ok=True)
    link = out / "sessions.jsonl"
    if not link.exists():
        link.symlink_to((data / "sessions.jsonl").resolve())
    path = out / "queries.json"
    with path.open("w", encoding="utf-8") as f:
        json.dump(questions, f, ensure_ascii=False, indent=1)
    return path


def limited(questions: list[dict], limit: int | None) -> list[dict]:
    """At most ``limit`` questions of each set, in the file's order."""
    if limit is None:
        return questions
    taken: Counter[str] = Counter()
    out = []
    for question in questions:
        if taken[question["set"]] < limit:
            taken[question["set"]] += 1
            out.append(question)
    return out


def asked(question: dict) -> str:
    """The request as the hook sends it as a query: stripped, cut to what /context takes."""
    return stripped(question["query"])[:QUERY_LIMIT]


def event_text(event: dict) -> str:
    data = event.get("data") or {}
    if event["hookType"] == "post_tool_use":
        given = data.get("tool_input") or {}
        return f"{data.get('tool_name')}: " + " ".join(str(v) for v in given.values())
    return data.get("prompt") or data.get("assistantResponse") or ""


# -- plain BM25 ---------------------------------------------------------------------------


class BM25:
    """Okapi BM25 over tokenized documents."""

    def __init__(self, documents: list[list[str]], k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self.counts = [Counter(d) for d in documents]
        self.lengths = [len(d) for d in documents]
        self.average = sum(self.lengths) / max(len(documents), 1)
        df = Counter(term for counts in self.counts for term in counts)
        n = len(documents)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    def scores(self, query: list[str]) -> list[float]:
        terms = [t for t in dict.fromkeys(query) if t in self.idf]
        out = []
        for counts, length in zip(self.counts, self.lengths, strict=True):
            norm = self.k1 * (1 - self.b + self.b * length / self.average)
            out.append(
                sum(
                    self.idf[t] * counts[t] * (self.k1 + 1) / (counts[t] + norm)
                    for t in terms
                    if t in counts
                )
            )
        return out


class Baseline:
    """Plain BM25 over a project's history: per session, and per event."""

    def __init__(self, history: list[dict], tokenize: Callable[[str], list[str]] = tokens):
        self.tokenize = tokenize
        self.ids = [s["id"] for s in history]
        texts = [[event_text(e) for e in s["events"] if e["hookType"] != "stop"] for s in history]
        self.by_session = BM25([tokenize("\n".join(t)) for t in texts])
        self.owners = [sid for sid, t in zip(self.ids, texts, strict=True) for _ in t]
        self.by_event = BM25([tokenize(text) for t in texts for text in t])

    def rank(self, query: str, per: str) -> list[str]:
        terms = self.tokenize(query)
        if per == "session":
            scored = zip(self.by_session.scores(terms), self.ids, strict=True)
            return [sid for score, sid in sorted(scored, key=lambda x: -x[0]) if score > 0]
        best: dict[str, float] = {}
        for score, sid in zip(self.by_event.scores(terms), self.owners, strict=True):
            if score > best.get(sid, 0):
                best[sid] = score
        return sorted(best, key=lambda sid: -best[sid])


# -- the server ---------------------------------------------------------------------------


def call(url: str, path: str, body: dict | None = None, timeout: float = 300) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{url}{path}", data, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        return json.load(answer)


def batches(events: list[dict]) -> Iterable[list[dict]]:
    """The events in bodies of at most BULK_EVENTS items and about BULK_BYTES."""
    batch: list[dict] = []
    size = 0
    for event in events:
        cost = len(json.dumps(event).encode())
        if batch and (len(batch) == BULK_EVENTS or size + cost > BULK_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(event)
        size += cost
    if batch:
        yield batch


def ingest(url: str, history: dict[str, list[dict]]) -> int:
    """Every history session as the hooks would have sent it, oldest first; events sent."""
    sent = 0
    for session in sorted(
        (s for group in history.values() for s in group), key=lambda s: (s["started"], s["id"])
    ):
        first = session["events"][0]
        start = {
            "sessionId": session["id"],
            "project": session["project"],
            "cwd": first["cwd"],
            "agentId": first["agentId"],
        }
        call(url, "/agentmemory/session/start", start)
        for batch in batches(session["events"]):
            answer = call(url, "/agentmemory/observe/bulk", {"observations": batch})
            failed = [r for r in answer.get("results", []) if r.get("error")]
            assert not failed and not answer.get("errors"), (failed or answer["errors"])[:3]
            sent += len(batch)
    return sent


def indexed(report: dict) -> bool:
    """Every event stored and in the lexical index."""
    return report["index"]["eventsNotIndexed"] == 0 and report["queue"]["pendingWrites"] == 0


def caught_up(report: dict) -> bool:
    """Indexed, every document embedded, and the pipeline's jobs done."""
    queue, index = report["queue"], report["index"]
    return (
        indexed(report)
        and index["caughtUp"]
        and not index.get("documentsNotEmbedded")
        and queue["pendingWrites"] == queue["jobsPending"] == queue["jobsRunning"] == 0
    )


def wait_for(
    url: str,
    began: float,
    cap: float,
    ready: Callable[[dict], bool],
    probe: Callable[[], None] | None = None,
    look: Callable[[float, dict], None] | None = None,
) -> tuple[float | None, dict]:
    """Seconds from ``began`` until ``ready`` holds (None past ``cap``), and the last health
    report. Ready twice in a row: a job the last event queues may not be pending yet at the
    first look. ``probe`` runs at each look while documents wait for vectors; ``look`` is
    given each look's seconds and report."""
    streak = 0
    while True:
        report = health(url)
        if look is not None:
            look(time.perf_counter() - began, report)
        if probe is not None and report["index"].get("documentsNotEmbedded"):
            probe()
        streak = streak + 1 if ready(report) else 0
        if streak == 2:
            return time.perf_counter() - began, report
        if time.perf_counter() - began > cap:
            return None, report
        time.sleep(0.5)


def prober(url: str, questions: list[dict], out: list[float]) -> Callable[[], None]:
    """A /search with the next question's request, timed into ``out``: what a session
    starting during the catch-up waits for."""
    asked_ones = [q for q in questions if q["set"] != "control"] or questions
    turn = iter(range(10**9))

    def probe() -> None:
        question = asked_ones[next(turn) % len(asked_ones)]
        body = {"query": asked(question), "project": question["project"], "limit": 10}
        began = time.perf_counter()
        call(url, "/agentmemory/search", body)
        out.append((time.perf_counter() - began) * 1000)

    return probe


def wait_embedder(url: str, cap: float = 300) -> None:
    """The embedder loaded (when there is one): its start-up is not ingest's time."""
    deadline = time.monotonic() + cap
    while (embedder := health(url)["embedder"])["provider"] != "none" and not embedder["loaded"]:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the embedder did not load: {embedder}")
        time.sleep(0.5)


def sessions_of(view: dict) -> list[str]:
    """The host sessions a memory came from, first named first. A summary's ``sessionId``
    is its board row's id; its events name the host session."""
    named = [str(e).split(":", 1)[0] for e in view.get("eventIds") or []]
    if not named and view.get("sessionId"):
        named = [view["sessionId"]]
    return list(dict.fromkeys(named))


def public_id(kind: str, key: str, fragments_dir: str) -> str:
    """A block's id (a document's key) as /memories takes it."""
    if kind == "session":
        return f"session:{key}"
    if kind != "fragment":
        return key
    return str(PurePosixPath(key).relative_to(fragments_dir).with_suffix(""))


def memories(block: dict) -> list[tuple[str, str]]:
    """The memories a /context answer holds, by kind and id (not its report line or hint)."""
    return [(b["kind"], b["id"]) for b in block["blocks"] if b["kind"] in MEMORY_KINDS]


def ask(url: str, question: dict, n: int, *, stored: bool = False, again: bool = False) -> dict:
    """One question as a new session's first prompt; what each call gave. ``stored``: the
    request is stored as the hook stores it, and indexed, before its block is asked for
    (the search is asked first, so its figures do not move)."""
    # Asked again of a kept home, which has had the question's session: a new one.
    session = f"real-sessions-question-{n}" + (f"-{time.time_ns()}" if again else "")
    project, query = question["project"], asked(question)
    started = call(
        url,
        "/agentmemory/session/start",
        {"sessionId": session, "project": project, "cwd": f"/src/{project}", "agentId": "bench"},
    )
    # The same standing block without a session: its items (session/start gives text).
    standing = call(url, "/agentmemory/context", {"project": project})

    def search() -> tuple[dict, float]:
        began = time.perf_counter()
        body = {"query": query, "project": project, "limit": SEARCH_LIMIT}
        return call(url, "/agentmemory/search", body), (time.perf_counter() - began) * 1000

    if stored:
        found, search_ms = search()
        prompt_event = {
            "sessionId": session,
            "project": project,
            "cwd": f"/src/{project}",
            "agentId": "bench",
            "eventId": f"{session}:prompt",
            "timestamp": datetime.now(UTC).isoformat(),
            "hookType": "prompt_submit",
            "data": {"prompt": question["query"]},
        }
        call(url, "/agentmemory/observe", prompt_event)
        if wait_for(url, time.perf_counter(), 60, indexed)[0] is None:
            raise RuntimeError(f"question {n}'s request was not indexed within 60 s")
    began = time.perf_counter()
    prompt = call(
        url,
        "/agentmemory/context",
        {"sessionId": session, "project": project, "hookEvent": "UserPromptSubmit", "query": query},
    )
    context_ms = (time.perf_counter() - began) * 1000
    if not stored:
        found, search_ms = search()
    ranked = list(dict.fromkeys(s for hit in found["results"] for s in sessions_of(hit)))
    return {
        "ranked": ranked,
        "start_text": started["context"],
        "start_items": memories(standing),
        "start_matches": standing["context"] in started["context"],
        "prompt_text": prompt["context"],
        "prompt_items": memories(prompt),
        "context_ms": context_ms,
        "search_ms": search_ms,
    }


def trace(url: str, items: set[tuple[str, str]], fragments_dir: str) -> dict:
    """Each injected memory's source sessions, read after every question was asked (a
    fragment read counts as a use, which would move later rankings)."""
    out = {}
    for kind, key in items:
        if kind == "project":
            out[(kind, key)] = []  # the project's L2 summary: no one session
            continue
        quoted = urllib.parse.quote(public_id(kind, key, fragments_dir), safe="/")
        try:
            out[(kind, key)] = sessions_of(call(url, f"/agentmemory/memories/{quoted}")["memory"])
        except urllib.error.HTTPError:
            out[(kind, key)] = []
    return out


def run_mode(
    mode: str,
    history: dict,
    questions: list[dict],
    cap: float,
    *,
    when_indexed: bool = False,
    stored: bool = False,
    keep: Path | None = None,
    kept: Path | None = None,
    prepare: Callable[[Path], None] | None = None,
) -> dict:
    """Ingest the history into a new server (its home kept in ``keep/mode``), or ask a copy
    of a kept home (``kept``; ``prepare`` changes the copy first); wait as the options say;
    ask every question."""
    env = dict(MODES[mode])
    if keep is not None:  # the server's home (store, vault) kept for reading afterwards
        (keep / mode).mkdir(parents=True, exist_ok=True)
        env["MEMVAULT_HOME"] = str(keep / mode)
    with contextlib.ExitStack() as stack:
        if kept is not None:  # asked of a copy of a kept home: nothing ingested
            env["MEMVAULT_HOME"] = str(stack.enter_context(kept_copy(kept, mode, prepare)))
        try:
            with running_server(**env) as url:
                wait_embedder(url)
                began = time.perf_counter()
                events = ingest(url, history) if kept is None else 0
                posted = time.perf_counter() - began
                indexed_s, report = wait_for(url, began, cap, indexed)
                seconds = None
                during: list[float] = []  # /search while a backlog is being embedded, ms
                if kept is not None:
                    seconds, report = wait_for(url, began, cap, caught_up)
                elif not when_indexed:
                    probe = prober(url, questions, during)
                    seconds, report = wait_for(url, began, cap, caught_up, probe)
                asked_rows = [
                    ask(url, q, n, stored=stored, again=kept is not None)
                    for n, q in enumerate(questions)
                ]
                fragments_dir = PurePosixPath(report["vault"]["fragmentsFolder"]).name
                every = {i for r in asked_rows for i in r["start_items"] + r["prompt_items"]}
                sources = trace(url, every, fragments_dir)
        except subprocess.TimeoutExpired:
            # A server still embedding a backlog can take longer to stop than the helper
            # waits for; it was told to stop, and the figures are already read.
            print(f"{mode}: the server did not stop within 30 s of being told to", flush=True)
    rows = []
    for question, got in zip(questions, asked_rows, strict=True):
        rows.append(
            {
                "ranked": got["ranked"],
                "prompt": [sources[i] for i in got["prompt_items"]],
                "start": [sources[i] for i in got["start_items"]],
                "prompt_text": got["prompt_text"],
                "start_text": got["start_text"],
                "start_matches": got["start_matches"],
                "context_ms": got["context_ms"],
                "search_ms": got["search_ms"],
                "session": question["session"],
            }
        )
    return {
        "events": events,
        "posted_s": posted,
        "indexed_s": indexed_s,
        "caught_up_s": seconds,
        "search_during_ms": during,
        "health": {k: report[k] for k in ("store", "queue", "vault", "embedder", "index")},
        "rows": rows,
    }


# -- figures ------------------------------------------------------------------------------


def _spread(times: list[float]) -> tuple[int, float, float] | None:
    return (len(times), statistics.median(times), percentile(times, 95)) if times else None


def recall(ranked: list[str], relevant: set[str], k: int) -> float:
    return len(set(ranked[:k]) & relevant) / len(relevant)


def score(question: dict, row: dict) -> dict:
    """One question's figures for one memvault mode."""
    relevant = set(question["relevant"])
    out: dict = {"prompt_items": len(row["prompt"]), "start_items": len(row["start"])}
    if relevant:
        out |= {f"R@{k}": recall(row["ranked"], relevant, k) for k in KS}
        out["hit@5"] = float(bool(set(row["ranked"][:5]) & relevant))
        drawn = {s for sources in row["prompt"] for s in sources}
        out["prompt_recall"] = len(drawn & relevant) / len(relevant)
        out["prompt_lines_relevant"] = sum(bool(set(s) & relevant) for s in row["prompt"])
        out["start_lines_relevant"] = sum(bool(set(s) & relevant) for s in row["start"])
    if question["set"] == "decision":
        term = question["term"].lower()
        out["term_prompt"] = term in row["prompt_text"].lower()
        out["term_either"] = out["term_prompt"] or term in row["start_text"].lower()
    return out


def baseline_scores(question: dict, baseline: Baseline) -> dict[str, dict]:
    relevant = set(question["relevant"])
    out = {}
    for per in ("session", "event"):
        ranked = baseline.rank(asked(question), per)
        cells = {f"R@{k}": recall(ranked, relevant, k) for k in KS}
        cells["hit@5"] = float(bool(set(ranked[:5]) & relevant))
        out[f"bm25-{per}"] = cells
    return out


def groups(questions: list[dict]) -> dict[str, list[int]]:
    """Question indexes by set, by set and language, by set and project (``files
    blastmerge``, ``control docgen``: where a figure comes from), and all labelled ones
    together."""
    out: dict[str, list[int]] = defaultdict(list)
    for i, q in enumerate(questions):
        out[q["set"]].append(i)
        if q["set"] != "control":
            out["labelled"].append(i)
            out[f"{q['set']} {q['language']}"].append(i)
        if q["set"] in ("files", "control"):
            out[f"{q['set']} {q['project']}"].append(i)
    projects = sorted({q["project"] for q in questions})
    order = [
        *("labelled", "files", "files en", "files zh"),
        *(f"files {project}" for project in projects),
        *("decision", "decision en", "control"),
        *(f"control {project}" for project in projects),
    ]
    return {name: out[name] for name in order if out.get(name)}


def differences(questions: list[dict], scored: dict[str, list[dict]], runs: dict) -> dict:
    """Per mode, the ``files`` questions' recall@10 minus BM25 per session's, its mean and
    a 95 % bootstrap interval (the questions resampled): how far the margin holds beyond
    these few questions."""
    files = [i for i, q in enumerate(questions) if q["set"] == "files"]
    if not files or "bm25-session" not in scored:
        return {}
    base = [scored["bm25-session"][i]["R@10"] for i in files]
    return {
        mode: bootstrap_difference([scored[mode][i]["R@10"] for i in files], base) for mode in runs
    }


def summarize(questions: list[dict], scored: dict[str, list[dict]], runs: dict) -> dict:
    """Figures per group of questions and system, and per mode the run's own figures."""
    table: dict[str, dict] = {}
    for name, members in groups(questions).items():
        cells: dict = {"n": len(members)}
        for system, per_question in scored.items():
            picked = [per_question[i] for i in members]
            figures = {}
            control = name.startswith("control")
            if not control:
                for key in (*(f"R@{k}" for k in KS), "hit@5"):
                    figures[key] = statistics.fmean(p[key] for p in picked)
            if system in runs and not control:
                figures["prompt_recall"] = statistics.fmean(p["prompt_recall"] for p in picked)
                for block in ("prompt", "start"):
                    lines = sum(p[f"{block}_items"] for p in picked)
                    hits = sum(p[f"{block}_lines_relevant"] for p in picked)
                    figures[f"{block}_precision"] = hits / lines if lines else None
                    figures[f"{block}_lines"] = lines
            if system in runs and control:
                figures["silent"] = statistics.fmean(p["prompt_items"] == 0 for p in picked)
            if system in runs and name.startswith("decision"):
                for key in ("term_prompt", "term_either"):
                    figures[key] = sum(p[key] for p in picked)
            cells[system] = figures
        table[name] = cells
    table["requests"] = requests_once(questions, runs)
    modes = {}
    for mode, run in runs.items():
        context = [r["context_ms"] for r in run["rows"]]
        search = [r["search_ms"] for r in run["rows"]]
        modes[mode] = {
            "events": run["events"],
            "posted_s": run["posted_s"],
            "indexed_s": run["indexed_s"],
            "caught_up_s": run["caught_up_s"],
            "context_p50_ms": statistics.median(context) if context else None,
            "context_p95_ms": percentile(context, 95) if context else None,
            "search_p50_ms": statistics.median(search) if search else None,
            "search_during": _spread(run.get("search_during_ms") or []),
            "start_block_checked": sum(r["start_matches"] for r in run["rows"]),
            # How long each block is, in the tokens the budget counts.
            "start_tokens_p50": statistics.median(
                estimate_tokens(r["start_text"]) for r in run["rows"]
            ),
            "prompt_tokens_p50": statistics.median(
                [estimate_tokens(r["prompt_text"]) for r in run["rows"] if r["prompt_text"]] or [0]
            ),
            "documents": run["health"]["store"],
            "fragments": run["health"]["vault"]["fragments"],
            "embedder": run["health"]["embedder"],
        }
    return {
        "groups": table,
        "files_minus_bm25": differences(questions, scored, runs),
        "modes": modes,
    }


def requests_once(questions: list[dict], runs: dict) -> dict:
    """The prompt block's line precision over the labelled requests each counted once: a
    request labelled twice (a ``files`` and a ``decision`` question asking the same opening
    request) gets one block, and its lines are from a relevant session when from one that
    either label names."""
    asked_once: dict[tuple[str, int], list[int]] = defaultdict(list)
    for i, q in enumerate(questions):
        if q["set"] != "control":
            asked_once[(q["session"], q["turn"])].append(i)
    cells: dict = {"n": len(asked_once)}
    for mode, run in runs.items():
        lines = hits = 0
        for members in asked_once.values():
            relevant = {s for i in members for s in questions[i]["relevant"]}
            prompt = run["rows"][members[0]]["prompt"]
            lines += len(prompt)
            hits += sum(bool(set(sources) & relevant) for sources in prompt)
        cells[mode] = {"prompt_precision": hits / lines if lines else None, "prompt_lines": lines}
    return cells


def _s(seconds: float | None) -> str:
    return f"{seconds:.1f} s" if seconds is not None else "not waited for (or past --wait)"


def _f(value: float | None, width: int = 5) -> str:
    return f"{value:{width}.2f}" if value is not None else " " * (width - 1) + "-"


def show(figures: dict, systems: list[str]) -> None:
    table, modes = figures["groups"], figures["modes"]
    for mode, m in modes.items():
        print(
            f"{mode}: {m['events']:,} events posted in {m['posted_s']:.1f} s; after the first"
            f" request indexed {_s(m['indexed_s'])}, caught up {_s(m['caught_up_s'])};"
            f" {m['fragments']} fragments; /context p50"
            f" {m['context_p50_ms']:.0f} ms p95 {m['context_p95_ms']:.0f} ms; /search p50"
            f" {m['search_p50_ms']:.0f} ms"
        )
        print(
            f"{mode}: block tokens p50: SessionStart {m['start_tokens_p50']:.0f}, prompt"
            f" (when one is given) {m['prompt_tokens_p50']:.0f}"
        )
        if m["search_during"]:
            n, p50, p95 = m["search_during"]
            print(
                f"{mode}: /search while documents waited for vectors: n={n}"
                f" p50 {p50:.0f} ms p95 {p95:.0f} ms"
            )
    print("\nsearch: recall@5 / recall@10 / hit@5 of the relevant sessions")
    print(f"{'questions':22} {'n':>3}  " + "".join(f"{s:>19}" for s in systems))
    for name, cells in table.items():
        if name.startswith("control") or name == "requests":
            continue
        line = "".join(
            "  " + " ".join(_f(cells[s][k]) for k in ("R@5", "R@10", "hit@5")) for s in systems
        )
        print(f"{name:22} {cells['n']:>3}  {line}")
    for mode, (mean, low, high) in figures["files_minus_bm25"].items():
        print(
            f"files recall@10, {mode} minus bm25-session: {mean:+.2f}"
            f" (95 % bootstrap interval {low:+.2f} to {high:+.2f})"
        )
    mine = [s for s in systems if s in modes]
    print(
        "\ninjected: prompt block's recall of relevant sessions / share of its lines from a"
        " relevant session (lines) / the same for the SessionStart block"
    )
    for name, cells in table.items():
        if name.startswith("control") or name == "requests":
            continue
        line = "".join(
            f"  {s}: {_f(cells[s]['prompt_recall'])} {_f(cells[s]['prompt_precision'])}"
            f" ({cells[s]['prompt_lines']:>3}) {_f(cells[s]['start_precision'])}"
            f" ({cells[s]['start_lines']:>3})"
            for s in mine
        )
        print(f"{name:22} {cells['n']:>3}{line}")
    if "requests" in table:
        cells = table["requests"]
        once = "".join(
            f"  {s}: {_f(cells[s]['prompt_precision'])} ({cells[s]['prompt_lines']:>3})"
            for s in mine
        )
        print(
            f"labelled requests each once, their lines from a session any label names"
            f" (n={cells['n']}):{once}"
        )
    if "control" in table:
        cells = table["control"]
        silent = "  ".join(f"{s} {cells[s]['silent']:.2f}" for s in mine)
        print(f"\ncontrols with nothing injected at the prompt (n={cells['n']}): {silent}")
        for name, cells in table.items():
            if name.startswith("control "):
                silent = "  ".join(f"{s} {cells[s]['silent']:.2f}" for s in mine)
                print(f"  asked in {name.removeprefix('control '):14} (n={cells['n']}): {silent}")
    if "decision" in table:
        cells = table["decision"]
        terms = "  ".join(
            f"{s} {cells[s]['term_prompt']}/{cells['n']} ({cells[s]['term_either']}/{cells['n']}"
            " either block)"
            for s in mine
        )
        print(f"decision terms in the prompt block: {terms}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--lexical-only", action="store_true", help="skip the default mode")
    parser.add_argument("--default-only", action="store_true", help="skip the lexical mode")
    parser.add_argument("--projects", help="comma-separated project names (default: all)")
    parser.add_argument("--limit", type=int, help="at most N questions of each set")
    parser.add_argument(
        "--wait", type=float, default=3600, help="seconds to wait for caught up (default 3600)"
    )
    parser.add_argument(
        "--ask-when-indexed",
        action="store_true",
        help="ask once every event is indexed, before the pipeline's jobs and the vectors",
    )
    parser.add_argument(
        "--prompt-stored",
        action="store_true",
        help="store and index each request as the hook does before asking for its block",
    )
    share_option(parser)
    parser.add_argument(
        "--as-lived",
        action="store_true",
        help="move the history in time to end an hour ago, so recency weighs in it as in a"
        " history just lived (a replayed one is months old)",
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--keep",
        type=Path,
        help="keep each mode's server home (store and vault) in DIR/<mode> (new folders)",
    )
    parser.add_argument(
        "--from-kept",
        type=Path,
        help="ask a copy of the homes --keep left in DIR, without ingesting: the figures of"
        " search and the blocks only (what a change to reading does, in a minute or two)",
    )
    args = parser.parse_args()
    if args.keep is not None and any((args.keep / mode).exists() for mode in MODES):
        parser.error(f"--keep {args.keep}: a mode's folder is there already; give a new one")
    chosen = set(args.projects.split(",")) if args.projects else None
    modes = ["lexical"] if args.lexical_only else ["default"] if args.default_only else list(MODES)
    if args.from_kept is not None:
        if args.as_lived:
            parser.error("--as-lived and --from-kept: a kept home holds the dates it was kept with")
        if args.keep is not None:
            parser.error("--keep and --from-kept: give one; a kept home is asked, not ingested")
        missing = [mode for mode in modes if not (args.from_kept / mode / "memvault.db").is_file()]
        if missing:
            parser.error(
                f"--from-kept {args.from_kept}: no kept home for {', '.join(missing)}"
                f" (a --keep run leaves DIR/<mode>/memvault.db)"
            )
    need_data(parser, args.data, "sessions.jsonl", "queries.json")
    history, questions = load(args.data, chosen, args.history_share)
    questions = limited(questions, args.limit)
    if args.as_lived:
        history = as_lived(history, datetime.now(UTC))
    print(
        f"real coding sessions: {len(history)} projects, {sum(map(len, history.values()))}"
        f" history sessions ({sum(len(s['events']) for g in history.values() for s in g):,}"
        f" events); {sum(q['set'] != 'control' for q in questions)} labelled questions,"
        f" {sum(q['set'] == 'control' for q in questions)} controls — {machine()},"
        f" {datetime.now(UTC):%Y-%m-%d}",
        flush=True,
    )
    baselines = {project: Baseline(group) for project, group in history.items()}
    scored: dict[str, list[dict]] = {}
    runs = {}
    for mode in modes:
        began = time.perf_counter()
        runs[mode] = run_mode(
            mode,
            history,
            questions,
            args.wait,
            when_indexed=args.ask_when_indexed,
            stored=args.prompt_stored,
            keep=args.keep,
            kept=args.from_kept,
        )
        scored[mode] = [score(q, r) for q, r in zip(questions, runs[mode]["rows"], strict=True)]
        print(
            f"{mode}: asked; caught up {_s(runs[mode]['caught_up_s'])} after the first request"
            f" ({time.perf_counter() - began:.0f} s for the mode)",
            flush=True,
        )
    for system in ("bm25-session", "bm25-event"):
        scored[system] = [
            baseline_scores(q, baselines[q["project"]])[system] if q["relevant"] else {}
            for q in questions
        ]
    figures = summarize(questions, scored, runs)
    show(figures, [s for s in SYSTEMS if s in scored])
    if args.json:
        rows = [
            {
                "set": q["set"],
                "project": q["project"],
                "session": q["session"],
                "turn": q["turn"],
                **{system: scored[system][i] for system in scored},
                **{f"{mode} ranked": runs[mode]["rows"][i]["ranked"][:10] for mode in runs},
                # The prompt block as injected, and the sessions each of its lines came from.
                **{
                    f"{mode} prompt": {
                        "text": runs[mode]["rows"][i]["prompt_text"],
                        "sources": runs[mode]["rows"][i]["prompt"],
                    }
                    for mode in runs
                },
            }
            for i, q in enumerate(questions)
        ]
        args.json.write_text(json.dumps({**figures, "questions": rows}, indent=2))


if __name__ == "__main__":
    main()
