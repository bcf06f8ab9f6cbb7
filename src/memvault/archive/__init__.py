"""Export and import of all memory: a versioned, streamed archive (NDJSON).

An archive holds what cannot be derived: sessions, the raw events (optional), and the
vault's files (fragments, the session board, snapshots). Observations, summaries, the graph
and the search index are derived again after an import. ``Export`` writes one;
``import_stream`` reads one back, or agentmemory's export, with a strategy (``merge``,
``skip``, ``replace``) for what the memory already holds. See ``docs/export.md``.
"""

from __future__ import annotations

from memvault.archive.export import Export, file_name
from memvault.archive.format import FORMAT, MEDIA_TYPE, VERSION, ArchiveError
from memvault.archive.reader import import_document, import_lines, import_stream
from memvault.archive.report import Counts, ImportReport, Problem
from memvault.archive.restore import STRATEGIES

__all__ = [
    "FORMAT",
    "MEDIA_TYPE",
    "STRATEGIES",
    "VERSION",
    "ArchiveError",
    "Counts",
    "Export",
    "ImportReport",
    "Problem",
    "file_name",
    "import_document",
    "import_lines",
    "import_stream",
]
