"""memvault: lasting memory for AI coding agents, kept as markdown in your Obsidian vault.

Attributes load on first use, so the hook command (``memvault.hook``), which imports only
the standard library, does not pay for the server's imports.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hook command pays for every import
if TYPE_CHECKING:
    from memvault.memory import Memory

__all__ = ["Memory", "__version__"]


def __getattr__(name: str) -> object:
    if name == "Memory":
        from memvault.memory import Memory

        return Memory
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("memvault")
        except PackageNotFoundError:  # a source tree that is not installed
            return "0.0.0"
    raise AttributeError(f"module 'memvault' has no attribute {name!r}")
