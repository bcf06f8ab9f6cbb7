"""Versioned schema migrations, one folder of numbered ``.sql`` files per engine.

A file ``NNNN_name.sql`` is migration NNNN. Each engine records what it applied in
``schema_migrations`` and applies the rest, in order, when the store opens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def load(engine: str) -> list[Migration]:
    folder = resources.files(__package__).joinpath(engine)
    found = []
    for entry in folder.iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise RuntimeError(f"duplicate migration numbers for {engine}: {versions}")
    return found
