"""The PostgreSQL engine, one module per part of the contract (see ``store``)."""

from memvault.store.postgres.store import (
    CONNECTION_WAIT,
    POOL_SIZE,
    PostgresStore,
    applied_schema_version,
)

__all__ = ["CONNECTION_WAIT", "POOL_SIZE", "PostgresStore", "applied_schema_version"]
