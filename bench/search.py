"""Search latency at scale: 100,000 observations and 10,000 fragments, lexical and hybrid.

The observations are prompts of 500 sessions (200 each), so the index also holds 500
session documents of about 5,000 words: a search of sessions alone is measured as well.

Searches run as they do in the server, with the index kept current in the background.
Texts are generated (a Zipf-distributed vocabulary of code-ish words, so posting lists
look like a real project's); queries are three to five words taken from indexed texts.
Hybrid search embeds each query for real with the local model; the stored document
vectors are random unit vectors of the model's dimension (embedding 110,000 texts on
2 cores would take the better part of an hour and does not change what a search costs).

    .venv/bin/python bench/search.py [--observations 100000] [--fragments 10000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from _server import machine

from memvault import Memory
from memvault.search.vectors import to_blob

QUERIES = 300


def vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    syllables = [
        "con",
        "fig",
        "ser",
        "ver",
        "cach",
        "pool",
        "auth",
        "tok",
        "en",
        "sync",
        "que",
        "ue",
        "log",
        "ger",
        "dep",
        "loy",
        "test",
        "run",
        "ner",
        "build",
        "pars",
        "index",
        "vec",
        "tor",
        "shard",
        "lock",
        "retry",
        "time",
        "out",
    ]
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))))
    return sorted(words)


def sentence(rng: random.Random, words: list[str], weights: list[float], n: int) -> str:
    return " ".join(rng.choices(words, weights, k=n))


def seed(
    memory: Memory, rng: random.Random, n_obs: int, n_frag: int, *, write: bool = True
) -> list[str]:
    """Generate the corpus (the same for the same seed); store and index it if ``write``."""
    words = vocabulary(rng)
    weights = [1 / (rank + 1) for rank in range(len(words))]
    texts = []
    batch = []
    for i in range(n_obs):
        text = sentence(rng, words, weights, rng.randint(8, 40))
        texts.append(text)
        batch.append(
            {
                "hookType": "prompt_submit",
                "sessionId": f"s{i // 200}",
                "project": f"p{i % 20}",
                "cwd": "/c",
                "timestamp": f"2026-11-{1 + i % 28:02d}T10:00:00Z",
                "eventId": f"e{i}",
                "data": {"prompt": text},
            }
        )
        if len(batch) == 1000:
            if write:
                memory.observe_many(batch)
            batch = []
    if batch and write:
        memory.observe_many(batch)
    if write:
        memory.index.index_now(vectors=False)
    folder = memory.settings.fragments_path
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n_frag):
        summary = sentence(rng, words, weights, 12)
        facts = sentence(rng, words, weights, 20)
        importance = round(rng.random(), 2)
        texts.append(summary)
        if write:
            (folder / f"p{i % 20} - 2026-11-01 - f{i}.md").write_text(
                f"---\ntags:\n  - agent-memory\nproject: p{i % 20}\ndate: 2026-11-01\n"
                f"summary: {summary}\nimportance: {importance}\n---\n- {facts}\n"
            )
    if write:
        memory.index.index_now(vectors=False)
    return texts


def random_vectors(memory: Memory, dim: int, rng: np.random.Generator) -> None:
    store = memory.store
    model = memory.index.semantic.model
    revision = 0
    while pending := store.documents_to_embed(revision, limit=5000):
        vectors = rng.standard_normal((len(pending), dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        store.write_vectors(
            model,
            [(d, r, to_blob(v)) for (d, r, _), v in zip(pending, vectors, strict=True)],
            cursor=(memory.index.semantic.cursor_name, pending[-1][1]),
        )
        revision = pending[-1][1]


def measure(memory: Memory, queries: list[str], **kwargs) -> tuple[float, float]:
    for query in queries[: min(20, len(queries) // 4)]:
        memory.search(query, **kwargs)
    times = []
    for query in queries:
        started = time.perf_counter()
        memory.search(query, **kwargs)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), statistics.quantiles(times, n=20)[18]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--observations", type=int, default=100_000)
    parser.add_argument("--fragments", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=QUERIES, help="Queries per measurement.")
    parser.add_argument(
        "--home", type=Path, help="Keep the seeded store here and reuse it on the next run."
    )
    args = parser.parse_args()
    rng = random.Random(7)
    print(
        f"search latency, {args.observations:,} observations + {args.fragments:,} "
        f"fragments — {machine()}"
    )
    with tempfile.TemporaryDirectory() as scratch:
        home = args.home or Path(scratch)
        reuse = (home / "memvault.db").exists()
        with Memory.open(home=home, embeddings="local") as memory:
            run(memory, home, rng, args, reuse)


def run(memory: Memory, home: Path, rng: random.Random, args, reuse: bool) -> None:
    started = time.perf_counter()
    texts = seed(memory, rng, args.observations, args.fragments, write=not reuse)
    memory.index.semantic.warm()
    if not reuse:
        random_vectors(memory, memory.index.semantic.embedder.dim, np.random.default_rng(7))
        print(f"seeded and indexed in {time.perf_counter() - started:.0f} s")
    queries = [
        " ".join(rng.sample(text.split(), min(len(text.split()), rng.randint(3, 5))))
        for text in rng.sample(texts, args.queries)
    ]
    with Memory.open(home=home, embeddings="none") as lexical:
        for label, opened in (("lexical", lexical), ("hybrid", memory)):
            if opened.index.semantic is not None:
                opened.index.semantic.warm()
            # As in the server: the index is kept current in the background, so a search
            # only searches.
            opened.index.index_now()
            opened.index.start()
            for kinds, name in (
                (None, "all kinds"),
                (["fragment"], "fragments"),
                (["session"], "sessions"),
            ):
                p50, p95 = measure(opened, queries, kinds=kinds)
                print(f"{label:8} {name:10} p50 {p50:6.1f} ms   p95 {p95:6.1f} ms")
            p50, p95 = measure(opened, queries, project="p3")
            print(f"{label:8} {'project':10} p50 {p50:6.1f} ms   p95 {p95:6.1f} ms")


if __name__ == "__main__":
    main()
