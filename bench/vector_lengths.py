"""What a vector reads, measured: documents/s and query times of the packaged e5 by how much
of a text it reads, on the texts memvault makes of real coding sessions.

The texts are made, not copied: a sample of the sessions of the coding-sessions set
(``../shared/bench/coding-sessions/sessions.jsonl``, read where it lies, never committed)
goes through a temporary store with embeddings off, and the text every document would
embed is read back (prompts, replies, session documents: tool calls get none). Then, in
this process, at one thread as the server runs the model:

- documents/s embedding a seeded sample of those texts one at a time, read whole (the
  engine averaging its 512-token windows, as before) or cut to 512, 256 or 128 tokens;
- the time to embed the start of the longest real requests, cut to 1,000, 3,000 and 6,000
  characters, as a query, whole and at each cap;
- with ``--threads``: documents/s of background embedding by one worker or two on the
  one engine, and a new query's time meanwhile;
- with ``--recall``: what the cut costs in ranking, vectors alone: each labelled question
  of ``queries.json`` (its request as the query) ranks the session documents of its
  project's history (the set's 60 % split) by cosine; recall@5/@10 of the relevant
  sessions, for each cap of the documents and of the query.

    .venv/bin/python bench/embeddings.py --lengths [--every 4] [--docs 300] [--threads | --recall]
        [--caps whole,512,256,128]   # --recall: the caps to rank with
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from _server import machine, percentile

SESSIONS = Path(__file__).resolve().parents[2] / "shared" / "bench" / "coding-sessions"
CAPS = (None, 512, 256, 128)  # None: the whole text, the engine's windows averaged
REQUEST_CHARS = (1000, 3000, 6000)


class Whole:
    """The packaged model as it ran before the cut: every window of a long text read and
    averaged (centred as memvault centres)."""

    def __init__(self) -> None:
        from memvault.embeddings import E5Embedder

        self._cut = E5Embedder()
        self._cut.embed(["load"])
        self._model = self._cut._load()

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._model.encode(t, is_query=False) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._model.encode(text, is_query=True)

    def token_count(self, text: str, *, query: bool = False) -> int:
        return self._cut.token_count(text, query=query)


def embedder(cap: int | None):
    if cap is None:
        return Whole()
    from memvault.embeddings import E5Embedder

    made = E5Embedder(tokens=cap, query_tokens=cap)
    made.embed(["load"])
    return made


def session_texts(every: int) -> tuple[list[tuple[str, str]], list[str]]:
    """(kind, vector text) of every document made of every ``every``-th session, and the
    sessions' requests (for queries)."""
    from memvault import Memory

    lines = (SESSIONS / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    sessions = [json.loads(line) for line in lines][::every]
    requests = [p for s in sessions for p in s.get("prompts", [])]
    with (
        tempfile.TemporaryDirectory(prefix="memvault-bench-") as home,
        Memory.open(home=Path(home), embeddings="none") as memory,
    ):
        for session in sessions:
            memory.observe_many(session["events"])
        memory.index.index_now()
        rows = memory.store.documents_to_embed(0, limit=1_000_000)
        kinds = memory.store.document_kinds([doc_id for doc_id, _, _ in rows])
    return [(kinds.get(doc_id, "?"), text) for doc_id, _, text in rows], requests


def docs_per_s(model, texts: list[str]) -> float:
    started = time.perf_counter()
    for text in texts:
        model.embed([text])
    return len(texts) / (time.perf_counter() - started)


def query_ms(model, text: str, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        model.embed_query(text)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def by_cap(texts: list[tuple[str, str]], requests: list[str], sample: int) -> None:
    rng = random.Random(5)
    chosen = rng.sample(texts, min(sample, len(texts)))
    kinds = dict(Counter(kind for kind, _ in texts))
    print(f"{len(texts)} vector texts ({kinds}); {len(chosen)} sampled")
    whole = embedder(None)
    counts = [whole.token_count(text) for _, text in chosen]
    long = [c for c in counts if c > 510]
    print(
        f"tokens read whole: median {statistics.median(counts):.0f}, p90"
        f" {percentile(counts, 90):.0f}, max {max(counts)}; over one window: {len(long)}"
    )
    longest = sorted(requests, key=len, reverse=True)[:3]
    print(f"requests for queries: the 3 longest ({', '.join(str(len(r)) for r in longest)} chars)")
    for cap in CAPS:
        model = whole if cap is None else embedder(cap)
        read = sum(min(c, cap or c) for c in counts)
        rate = docs_per_s(model, [text for _, text in chosen])
        queries = {
            n: statistics.median(query_ms(model, r[:n]) for r in longest) for n in REQUEST_CHARS
        }
        shown = ", ".join(f"{n:,} chars {ms:.0f} ms" for n, ms in queries.items())
        print(f"  {cap or 'whole'}: {rate:.1f} docs/s ({read:,} tokens read); query {shown}")
        sys.stdout.flush()


class Locked:
    """The provider as it was: one lock taken per text, so a query waits for the document
    being embedded."""

    def __init__(self, model) -> None:
        self._model, self._lock = model, threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = []
        for text in texts:
            with self._lock:
                rows.append(self._model.embed([text])[0])
        return np.stack(rows)

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            return self._model.embed_query(text)


def workers(texts: list[tuple[str, str]], requests: list[str], sample: int) -> None:
    """Background embedding (batches of 16 from a thread of background priority, as the
    index thread sends them) by one worker or two, and a new query's time meanwhile (a
    thread of normal priority, as a request's)."""
    from memvault.background import lower_this_threads_priority
    from memvault.embeddings import E5Embedder

    class Ungated(E5Embedder):
        def _wait_for_quiet(self) -> None:
            pass

    rng = random.Random(7)
    chosen = [text for _, text in rng.sample(texts, min(sample, len(texts)))]
    query = sorted(requests, key=len)[len(requests) // 2]  # a median request
    variants = {
        "one worker, a lock per text (before)": Locked(E5Embedder(workers=1)),
        "one worker, no lock": E5Embedder(workers=1),
        "two workers, the second gives way to queries": E5Embedder(workers=2),
        "two workers, no giving way": Ungated(workers=2),
    }
    for model in variants.values():
        model.embed(["load", "the model"])
    alone = query_ms(variants["one worker, no lock"], query, 9)
    print(f"alone: a median request's query {alone:.0f} ms")
    for label, model in variants.items():
        done = threading.Event()
        times: list[float] = []

        def background(model=model, done=done) -> None:
            lower_this_threads_priority()
            for i in range(0, len(chosen), 16):
                model.embed(chosen[i : i + 16])
            done.set()

        worker = threading.Thread(target=background)
        started = time.perf_counter()
        worker.start()
        while not done.is_set():
            times.append(query_ms(model, f"{query} {len(times)}", 1))  # a new query each time
            done.wait(0.2)
        rate = len(chosen) / (time.perf_counter() - started)
        worker.join()
        print(
            f"  {label}: {rate:.1f} docs/s; a query meanwhile p50 {statistics.median(times):.0f}"
            f" ms, p95 {percentile(times, 95):.0f} ms ({len(times)} queries)"
        )
        sys.stdout.flush()


def history_documents() -> tuple[dict[str, list[tuple[str, str]]], list[dict]]:
    """Per project, (session id, vector text) of its history sessions' documents; and the
    labelled questions."""
    from memvault import Memory

    sys.path.insert(0, str(SESSIONS))
    from bm25_baseline import history

    lines = (SESSIONS / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    kept = history([json.loads(line) for line in lines])
    found: dict[str, list[tuple[str, str]]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="memvault-bench-") as home,
        Memory.open(home=Path(home), embeddings="none") as memory,
    ):
        for group in kept.values():
            for session in group:
                memory.observe_many(session["events"])
        memory.index.index_now()
        texts = {i: text for i, _, text in memory.store.documents_to_embed(0, limit=10**6)}
        for project, group in kept.items():
            docs = [memory.store.document("session", s["id"]) for s in group]
            found[project] = [(d.key, texts[d.id]) for d in docs if d and d.id in texts]
    questions = json.loads((SESSIONS / "queries.json").read_text(encoding="utf-8"))
    return found, [q for q in questions if q["relevant"]]


def recall(caps: tuple[int | None, ...] = CAPS) -> None:
    documents, questions = history_documents()
    total = sum(len(d) for d in documents.values())
    print(f"{len(questions)} labelled questions; {total} history session documents")
    models = {cap: embedder(cap) for cap in caps}
    queries = {  # each request embedded once per cap (read whole, one is 160,000 characters)
        cap: [models[cap].embed_query(q["query"]) for q in questions] for cap in caps
    }
    for doc_cap in caps:
        started = time.perf_counter()
        matrices = {
            project: models[doc_cap].embed([text for _, text in docs])
            for project, docs in documents.items()
        }
        took = time.perf_counter() - started
        for query_cap in caps:
            hits = {5: 0.0, 10: 0.0}
            for question, query in zip(questions, queries[query_cap], strict=True):
                ranked = np.argsort(-(matrices[question["project"]] @ query))
                keys = [documents[question["project"]][i][0] for i in ranked]
                for k in hits:
                    found = set(keys[:k]) & set(question["relevant"])
                    hits[k] += len(found) / len(question["relevant"])
            print(
                f"  documents {doc_cap or 'whole'} ({total / took:.1f} docs/s), query"
                f" {query_cap or 'whole'}: recall@5 {hits[5] / len(questions):.3f}"
                f" @10 {hits[10] / len(questions):.3f}"
            )
            sys.stdout.flush()


def parse_caps(text: str) -> tuple[int | None, ...]:
    """``whole,512,256`` as (None, 512, 256)."""
    return tuple(None if part == "whole" else int(part) for part in text.split(","))


def main(
    every: int, sample: int, threads: bool, ranking: bool = False, caps: str | None = None
) -> None:
    print(f"What a vector reads — {machine()}")
    if ranking:
        recall(parse_caps(caps) if caps else CAPS)
        return
    texts, requests = session_texts(every)
    if threads:
        workers(texts, requests, sample)
    else:
        by_cap(texts, requests, sample)
