"""The doctor's look at what memvault keeps: the store's schema, the vault's folders, the
index's backlog, and the hook's spool of events waiting for a server. It only reads: no
store is created or migrated and no file written."""

from __future__ import annotations

import os
import shlex
import sqlite3
from pathlib import Path
from typing import Any

from memvault.config import Settings
from memvault.doctor.finding import OK, PROBLEM, WARN, Finding
from memvault.errors import MemvaultError
from memvault.hook import spool
from memvault.hook.paths import spool_folder
from memvault.store import schema_versions, store_location
from memvault.vault.files import links_out
from memvault.vault.sync_conflicts import conflict_copies

LARGE_BACKLOG = 10_000  # events behind: search misses a lot of recent work


def check_store(settings: Settings) -> Finding:
    path = store_location(settings.store_url)
    try:
        versions = schema_versions(settings.store_url)
    except MemvaultError as exc:  # PostgreSQL: the extra is missing, the server unreachable
        return Finding("store", PROBLEM, str(exc), "check MEMVAULT_STORE_URL and the server")
    except sqlite3.Error as exc:
        return Finding(
            "store",
            PROBLEM,
            f"the store {path} cannot be read: {exc}",
            "move the file aside and run memvault rebuild, or restore it from a backup",
        )
    if versions is None:
        return Finding("store", WARN, f"no store at {path} yet", "memvault serve creates it")
    applied, newest = versions
    if applied > newest:
        return Finding(
            "store",
            PROBLEM,
            f"the store {path} has schema {applied}, newer than this memvault knows ({newest})",
            "upgrade memvault to the version that wrote it",
        )
    if applied < newest:
        return Finding(
            "store",
            WARN,
            f"the store {path} has schema {applied}; this version migrates it to {newest}",
            "memvault serve migrates it when it starts",
        )
    return Finding("store", OK, f"{path}, schema {applied} (current)")


def check_vault(settings: Settings) -> Finding:
    vault = settings.vault_path
    if settings.vault is not None and not vault.is_dir():
        return Finding(
            "vault",
            PROBLEM,
            f"MEMVAULT_VAULT is {vault}, which is not a folder",
            "point MEMVAULT_VAULT at your Obsidian vault, or unset it",
        )
    if not vault.exists():
        return Finding("vault", WARN, f"{vault} does not exist yet", "memvault serve creates it")
    for folder in (settings.fragments_path, vault / "memory", vault):
        if folder.is_dir() and not os.access(folder, os.W_OK):
            return Finding(
                "vault",
                PROBLEM,
                f"{folder} cannot be written: memory cannot be saved there",
                f"make it writable for this user: chmod u+w {shlex.quote(str(folder))}",
            )
    return Finding("vault", OK, f"{vault} is writable")


def check_backlog(health: dict[str, Any] | None) -> Finding:
    index = (health or {}).get("index")
    if index is None:
        return Finding("index", WARN, "unknown: no server to ask", "memvault serve")
    if index["caughtUp"]:
        return Finding("index", OK, f"caught up through event {index['lastEventSeq']:,}")
    behind = f"{index['eventsNotIndexed']:,} events not indexed"
    if index.get("changesNotIndexed"):
        behind += f", {index['changesNotIndexed']:,} rewritten observations not read again"
    if index.get("documentsNotEmbedded"):
        behind += f", {index['documentsNotEmbedded']:,} documents not embedded"
    if index["eventsNotIndexed"] > LARGE_BACKLOG:
        return Finding(
            "index",
            WARN,
            f"{behind}: search misses recent work until it drains",
            "leave the server running; memvault status shows the backlog fall",
        )
    return Finding("index", OK, f"{behind}, draining")


def check_links(settings: Settings) -> Finding:
    """Symbolic links in memvault's folders of the vault that lead out of it: memvault
    neither reads nor writes through them, so what they point to is not in memory."""
    vault = settings.vault_path
    found = links_out(vault, [settings.fragments_path, vault / "memory"])
    if not found:
        return Finding("vault links", OK, "no symbolic link leads out of the vault")
    path, target = found[0]
    return Finding(
        "vault links",
        WARN,
        f"{len(found)} symbolic link(s) lead out of the vault and are not read or written "
        f"(first: {path} → {target})",
        "copy what they point to into the vault if it is memory, or remove the links",
    )


def check_spool(settings: Settings, *, running: bool) -> Finding:
    folder = spool_folder(str(settings.home))
    waiting = len(spool.pending(folder))
    bad_folder = Path(folder) / spool.BAD
    bad = spool.set_aside(folder)
    if bad:
        return Finding(
            "spool",
            PROBLEM,
            f"{len(bad)} spooled file(s) could not be read or were refused as bad input, "
            f"and were set aside in {bad_folder}"
            f" (first: {bad[0]})",
            f"read them (their events were not stored), then delete them from {bad_folder}",
        )
    if waiting and not running:
        return Finding(
            "spool",
            WARN,
            f"{waiting} event(s) wait in {folder} for a server",
            "memvault serve takes them in",
        )
    if waiting:
        return Finding("spool", OK, f"{waiting} event(s) in {folder}, being taken in")
    return Finding("spool", OK, "empty")


def check_sync_conflicts(settings: Settings) -> Finding:
    """Conflict copies a sync folder left of the board or a snapshot: each named, with
    what to do (the server merges a copy of the board by itself; one left could not be)."""
    copies = conflict_copies(settings.vault_path)
    if not copies:
        return Finding("sync conflicts", OK, "no conflict copies in the vault's memory/ folder")
    named = "; ".join(f"{c.path} (a copy of {c.of})" for c in copies)
    advice = " ".join(dict.fromkeys(c.advice for c in copies))
    return Finding("sync conflicts", WARN, named, advice)
