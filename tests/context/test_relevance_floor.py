"""The relevance floor: a memory is called relevant to a request only above it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from memvault.search import context as packing
from memvault.search.query import parse
from memvault.vault.remember import Draft

BENCH = Path(__file__).parents[2] / "bench" / "relevance.py"


def _labelled():
    """The labelled set, read by the benchmark's own loader: one reading of the file."""
    spec = importlib.util.spec_from_file_location("bench_relevance", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench.load()


def test_the_floor_separates_the_labelled_requests(memory):
    fragments, requests = _labelled()
    ids = {}
    for key, summary, facts in fragments:
        done = memory.remember(
            Draft(project="demo-app", summary=summary, facts=facts, description=key)
        )
        ids[key] = done.path.relative_to(memory.settings.vault_path).as_posix()
    memory.index.index_now()
    for label, target, text in requests:
        hits = memory.search(text, limit=10, project="demo-app", kinds=["fragment"])
        terms = parse(text).terms
        weights = packing.term_weights(
            terms, memory.store.term_counts(terms, cap=1000), memory.store.document_count()
        )
        passed = {
            h.document.key
            for h in hits
            if packing.relevant(h, packing.matched(weights, h.document))
        }
        if label == "about":
            assert ids[target] in passed, text
        else:
            assert not passed, text


def test_an_unrelated_request_finds_nothing_relevant(auth_memory):
    packed = auth_memory.context.context(project="demo-app", query="kubernetes helm chart upgrade")
    assert packed.text.startswith("📖 agent memory：讀取 0 個碎片 → ")
    assert "no relevant fragments" in packed.text
    assert "→ relevant" not in packed.text
    assert not [b for b in packed.blocks if b["kind"] == "fragment"]
    # The search itself still answers with its best candidates: the floor is the block's.
    assert auth_memory.search("kubernetes helm chart upgrade", project="demo-app")


def test_a_request_about_the_project_labels_its_fragment_relevant(auth_memory):
    packed = auth_memory.context.context(
        project="demo-app", query="how long is the access token valid"
    )
    line = packed.text.splitlines()[0]
    assert line.startswith("📖 agent memory：讀取 1 個碎片 → login tokens: ")
    assert line.endswith("→ relevant")
    assert "argon2id" not in packed.text


def test_a_standing_block_does_not_call_its_fragments_relevant(auth_memory):
    line = auth_memory.context.context(project="demo-app").text.splitlines()[0]
    assert "讀取 2 個碎片" in line
    assert "→ relevant" not in line and "→ project memory" in line


def test_enrich_gives_a_fragment_about_the_file_and_none_that_only_shares_a_word(memory):
    memory.remember(
        Draft(
            project="demo-app",
            summary="payment.ts retries the charge once on a timeout",
            facts=["file: src/checkout/payment.ts", "retry: once, on timeout"],
            description="payment retries",
        )
    )
    memory.remember(
        Draft(
            project="demo-app",
            summary="The checkout page shows the basket total",
            facts=["page: checkout", "total: with tax"],
            description="checkout total",
        )
    )
    about = memory.context.enrich(files=["src/checkout/payment.ts"], project="demo-app")
    assert "payment retries" in about.text and "checkout total" not in about.text
    other = memory.context.enrich(files=["src/profile/avatar.ts"], project="demo-app")
    assert not [b for b in other.blocks if b["kind"] == "fragment"]
