"""memvault's use cases, as parts that ``Memory`` (``memory/root.py``) composes. The
REST API, MCP server, CLI and viewer call the parts and nothing below."""

from memvault.ingest.capture import BulkResult, ItemError, ObserveResult
from memvault.memory.context import StartedSession
from memvault.memory.health import EmbedderState, Health, LLMState
from memvault.memory.root import Memory

__all__ = [
    "BulkResult",
    "EmbedderState",
    "Health",
    "ItemError",
    "LLMState",
    "Memory",
    "ObserveResult",
    "StartedSession",
]
