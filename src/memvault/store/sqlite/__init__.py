"""The embedded SQLite engine, one module per part of the contract (see ``store``)."""

from memvault.store.sqlite.connections import applied_schema_version
from memvault.store.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore", "applied_schema_version"]
