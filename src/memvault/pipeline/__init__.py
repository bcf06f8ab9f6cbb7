"""The processing pipeline: derive summaries and fragments from a session's captured events.

This package holds the offline half, pure functions with no store, threads or model: the
extractive session summary that feeds the session board and snapshots, and the fragment
extractor that finds what a session learned. Jobs and triggers call them with the events
past a watermark.
"""

from memvault.pipeline.extract import extract_fragments
from memvault.pipeline.summarize import Summary, has_real_work, snapshot_sections, summarize

__all__ = ["Summary", "extract_fragments", "has_real_work", "snapshot_sections", "summarize"]
