"""The store contract is cut into parts: each method in exactly one, Store all of them."""

from __future__ import annotations

import inspect

from memvault.store import PARTS, JobQueue, SearchIndex, Store
from memvault.store.sqlite import SQLiteStore


def _declared(part: type) -> set[str]:
    return {
        name
        for name, value in vars(part).items()
        if callable(value) or isinstance(value, property)
        if not name.startswith("_") or getattr(value, "__isabstractmethod__", False)
    }


def test_every_abstract_method_belongs_to_exactly_one_part():
    owners: dict[str, list[str]] = {}
    for part in PARTS:
        for name in _declared(part):
            owners.setdefault(name, []).append(part.__name__)
    assert Store.__abstractmethods__ <= owners.keys()
    shared = {name: parts for name, parts in owners.items() if len(parts) > 1}
    assert shared == {}
    # Store adds nothing of its own: it is the composition.
    assert _declared(Store) == set()


def test_store_is_the_composition_of_the_parts():
    assert Store.__bases__ == PARTS
    assert all(inspect.isabstract(part) for part in PARTS)


def test_each_part_is_a_contract_the_engine_fulfils(tmp_path):
    store = SQLiteStore(tmp_path / "memvault.db")
    try:
        assert all(isinstance(store, part) for part in PARTS)
        # The queue is written once; an engine supplies its clock and how a claim finds a job.
        assert JobQueue.__abstractmethods__ == {"_clock", "_claim"}
        assert "lexical_search" in SearchIndex.__abstractmethods__
        assert not inspect.isabstract(SQLiteStore)
    finally:
        store.close()
