"""The relevance floor: what requests about a project and unrelated ones score.

Loads bench/data/relevance.tsv (a project's fragments and labelled requests) into a fresh
memory and runs every request as the context block does. For each it prints the measure
the floor is set on (``matched``: the IDF-weighed share of the request's words a memory
holds; with --semantic also the cosine of the local model): for a request about the
project, its target fragment's; for an unrelated one, the best of anything it found. The
floor belongs between the two groups (search/context.py, docs/search.md).

    .venv/bin/python bench/relevance.py [--semantic]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

DATA = Path(__file__).parent / "data" / "relevance.tsv"


def load() -> tuple[list[tuple[str, str, list[str]]], list[tuple[str, str, str]]]:
    fragments, requests = [], []
    for line in DATA.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        kind, key, text, *rest = line.split("\t")
        if kind == "fragment":
            fragments.append((key, text, [f.strip() for f in rest[0].split(";")]))
        else:
            requests.append((kind, key, text))
    return fragments, requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--semantic", action="store_true", help="with the local embedder")
    args = parser.parse_args()
    os.environ["MEMVAULT_EMBEDDINGS"] = "local" if args.semantic else "none"
    from memvault import Memory
    from memvault.search import context as packing
    from memvault.search.query import parse
    from memvault.vault.remember import Draft

    fragments, requests = load()
    with tempfile.TemporaryDirectory() as home, Memory.open(home=Path(home)) as memory:
        keys = {}
        for key, summary, facts in fragments:
            done = memory.remember(
                Draft(project="demo-app", summary=summary, facts=facts, description=key)
            )
            keys[done.path.relative_to(memory.settings.vault_path).as_posix()] = key
        memory.index.index_now()
        scores: dict[str, list[tuple[float, float | None]]] = {"about": [], "unrelated": []}
        for label, target, text in requests:
            hits = memory.search(text, limit=10, project="demo-app")
            terms = parse(text).terms
            counts = memory.store.term_counts(terms, cap=1000)
            weights = packing.term_weights(terms, counts, memory.store.document_count())
            measured = [
                (
                    keys.get(h.document.key, h.document.key),
                    packing.matched(weights, h.document),
                    h.semantic,
                )
                for h in hits
            ]
            if label == "about":
                mine = [(m, s) for key, m, s in measured if key == target] or [(0.0, None)]
                best = mine[0]
            else:
                best = max(((m, s) for _, m, s in measured), default=(0.0, None))
            scores[label].append(best)
            cosine = f" cosine {best[1]:.3f}" if best[1] is not None else ""
            print(f"{label:9} matched {best[0]:.3f}{cosine}  {text}")
        for label, found in scores.items():
            shares = [m for m, _ in found]
            print(
                f"{label}: matched min {min(shares):.3f} median {statistics.median(shares):.3f} "
                f"max {max(shares):.3f} ({len(shares)} requests)"
            )
            cosines = [s for _, s in found if s is not None]
            if cosines:
                print(
                    f"{label}: cosine min {min(cosines):.3f} "
                    f"median {statistics.median(cosines):.3f} max {max(cosines):.3f}"
                )
        print(f"floor: matched {packing.MATCHED_FLOOR}, cosine {packing.SEMANTIC_FLOOR}")


if __name__ == "__main__":
    sys.exit(main())
