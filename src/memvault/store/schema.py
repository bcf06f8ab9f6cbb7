"""Bringing a store's schema up to date, written once for both engines: the migrations of
the engine (``store/migrations/<engine>``) not applied yet, in order, each recorded in
``schema_migrations``; and what a store's counters say, as ``StoreStats``."""

from __future__ import annotations

from collections.abc import Callable

from memvault.domain import StoreStats, iso, utc_now
from memvault.store import migrations


def migrate(conn, engine: str, run: Callable[[str], None], *, mark: str = "?") -> None:
    """Apply ``engine``'s migrations not yet applied on ``conn``; ``run`` runs one script."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    applied = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
    record = (
        f"INSERT INTO schema_migrations (version, name, applied_at) VALUES ({mark}, {mark}, {mark})"
    )
    for migration in migrations.load(engine):
        if migration.version in applied:
            continue
        run(migration.sql)
        conn.execute(record, (migration.version, migration.name, iso(utc_now())))


def store_stats(conn, engine: str, location: str, size: int) -> StoreStats:
    """The store's counts as its counters and its job queue have them."""
    counts = dict(conn.execute("SELECT name, value FROM counters").fetchall())
    jobs = dict(conn.execute("SELECT state, count(*) FROM jobs GROUP BY state").fetchall())
    (version,) = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return StoreStats(
        engine=engine,
        location=location,
        size_bytes=size,
        events=counts["events"],
        observations=counts["observations"],
        sessions=counts["sessions"],
        jobs_pending=jobs.get("pending", 0),
        jobs_running=jobs.get("running", 0),
        jobs_failed=jobs.get("failed", 0),
        schema_version=version or 0,
    )
