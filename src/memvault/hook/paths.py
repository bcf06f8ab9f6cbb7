"""Where memvault keeps its state on this machine, computed with the standard library only.

The hook command needs the spool folder without importing the server's settings (pydantic
alone would cost it more than the rest of its run), and ``memvault.config`` takes its default
from here too, so the hook and the server always agree on one folder.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing is not imported at run time: the hook pays for every module
if TYPE_CHECKING:
    from collections.abc import Mapping

APP = "memvault"
SPOOL = "spool"


def default_home(environ: Mapping[str, str] = os.environ) -> str:
    """The per-user data folder: ``$XDG_DATA_HOME/memvault`` when that is an absolute path,
    else ``~/.local/share/memvault`` (Linux), ``~/Library/Application Support/memvault``
    (macOS) or ``%LOCALAPPDATA%\\memvault`` (Windows), as platformdirs places them."""
    if sys.platform == "win32":
        base = environ.get("LOCALAPPDATA") or os.path.expanduser(r"~\AppData\Local")
        return os.path.join(base, APP)
    xdg = environ.get("XDG_DATA_HOME", "")
    if xdg.startswith("/"):
        return os.path.join(xdg, APP)
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~/Library/Application Support"), APP)
    return os.path.join(os.path.expanduser("~/.local/share"), APP)


def home(environ: Mapping[str, str] = os.environ) -> str:
    """``$MEMVAULT_HOME`` taken as it is (the server does not expand ``~`` either), else the
    default."""
    value = environ.get("MEMVAULT_HOME")
    if value is None:
        return default_home(environ)
    return value or "."


def spool_folder(home_folder: str) -> str:
    return os.path.join(home_folder, SPOOL)


VAULT_FILE = "vault.path"


def recorded_vault(home_folder: str) -> str | None:
    """The vault ``memvault vault PATH`` recorded for this home (``vault.path``, one line),
    or None when none is recorded."""
    try:
        with open(os.path.join(home_folder, VAULT_FILE), encoding="utf-8") as file:
            line = file.readline().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return line or None


def vault(environ: Mapping[str, str] = os.environ) -> str:
    """The vault this environment's memory keeps: ``$MEMVAULT_VAULT``, else the one recorded
    for its home, else ``$MEMVAULT_HOME/vault`` (as the server's settings choose it)."""
    folder = home(environ)
    return environ.get("MEMVAULT_VAULT") or recorded_vault(folder) or os.path.join(folder, "vault")


def same_place(a: str, b: str) -> bool:
    """Whether two folder paths name one folder (links and ``..`` resolved; equal text
    needs no look at the disk)."""
    if a == b:
        return True
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))
