"""Each of the PostgreSQL engine's advisory lock keys is its own: two parts sharing a key
would wait on each other (the vault owner's lock, held for a process's life, on the same
key as the event log's would stop every append)."""

from __future__ import annotations

import pytest

pytest.importorskip("psycopg")

from memvault.store.postgres import append as postgres_append
from memvault.store.postgres import documents as postgres_documents
from memvault.store.postgres import graph as postgres_graph
from memvault.store.postgres import sessions as postgres_sessions
from memvault.store.postgres import store as postgres
from memvault.store.postgres import vault as postgres_vault


def test_every_advisory_lock_key_is_distinct():
    keys = {
        "migrations": postgres.MIGRATION_LOCK,
        "board": postgres_sessions.BOARD_LOCK,
        "event log": postgres_append.EVENT_LOG_LOCK,
        "observation changes": postgres_append.OBSERVATION_CHANGES_LOCK,
        "documents": postgres_documents.DOCUMENTS_LOCK,
        "graph": postgres_graph.GRAPH_LOCK,
        "vault owner": postgres_vault.VAULT_LOCK,
    }
    assert len(set(keys.values())) == len(keys), keys
