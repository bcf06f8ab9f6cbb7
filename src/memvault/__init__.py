"""memvault: lasting memory for AI coding agents, kept as markdown in your Obsidian vault."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("memvault")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

from memvault.memory import Memory

__all__ = ["Memory", "__version__"]
