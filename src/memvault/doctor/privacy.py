"""The doctor's look at privacy: the projects a ``.memvaultignore`` makes private, what
one says of the current folder, and ``MEMVAULT_CAPTURE=off`` in this environment. Reads
only the ignore files and the hook's notes of private projects."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from memvault.config import Settings
from memvault.doctor.finding import OK, WARN, Finding
from memvault.hook import privacy


def check_privacy(
    settings: Settings, cwd: Path, environ: Mapping[str, str] | None = None
) -> Finding:
    environ = os.environ if environ is None else environ
    here = privacy.read(str(cwd), environ)
    projects = privacy.private_projects(str(settings.home))
    listed = f"private projects: {', '.join(projects)}" if projects else "no private projects"
    if here.whole and here.reason.startswith(privacy.CAPTURE_VARIABLE):
        return Finding(
            "privacy",
            WARN,
            f"{privacy.CAPTURE_VARIABLE}=off here: hosts started from this shell record "
            f"nothing; {listed}",
            f"unset {privacy.CAPTURE_VARIABLE} to record sessions again",
        )
    if here.whole:
        return Finding("privacy", OK, f"{cwd} is private ({here.reason}); {listed}")
    paths = sum(len(rules.patterns) for rules in here.rules)
    if paths:
        return Finding("privacy", OK, f"{paths} private path pattern(s) apply here; {listed}")
    return Finding("privacy", OK, listed)
