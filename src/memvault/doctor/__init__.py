"""`memvault doctor`: every part of a setup checked, each problem said with its fix.

This module runs the checks in the order a user would fix them; each concern's checks
live in their own module (:mod:`.server`, :mod:`.storage`, :mod:`.staleness`,
:mod:`.providers`, :mod:`.installs`, :mod:`.privacy`) and give a
:class:`~memvault.doctor.finding.Finding`.
The checks only read: no store is created or migrated, no file written, no paid API called.
"""

from __future__ import annotations

from pathlib import Path

from memvault.config import Settings
from memvault.doctor.finding import OK, PROBLEM, WARN, Finding
from memvault.doctor.installs import check_hosts, check_versions
from memvault.doctor.privacy import check_privacy
from memvault.doctor.providers import check_embeddings, check_llm
from memvault.doctor.server import check_server
from memvault.doctor.staleness import check_stale_fragments
from memvault.doctor.storage import (
    check_backlog,
    check_links,
    check_spool,
    check_store,
    check_sync_conflicts,
    check_vault,
)

__all__ = ["OK", "PROBLEM", "WARN", "Finding", "diagnose", "failed"]


def diagnose(
    settings: Settings, *, cwd: Path | None = None, user_home: Path | None = None
) -> list[Finding]:
    """Every check, in the order a user would fix them."""
    health, server = check_server(settings)
    findings = [server, check_store(settings), check_vault(settings), check_links(settings)]
    findings.append(check_sync_conflicts(settings))
    findings += [check_backlog(health), check_embeddings(settings, health), check_llm(settings)]
    findings.append(check_spool(settings, running=health is not None))
    findings.append(check_privacy(settings, cwd or Path.cwd()))
    findings.append(check_stale_fragments(settings, health))
    findings += check_hosts(settings, cwd or Path.cwd(), user_home or Path.home())
    findings.append(check_versions())
    return findings


def failed(findings: list[Finding]) -> bool:
    return any(f.level == PROBLEM for f in findings)
