"""Store URLs: which engine a URL names, the SQLite file it names, and how it is shown.

Plain text work on the URL, below both the settings (which check a configured URL) and the
store (which opens one): neither needs the other for it.
"""

from __future__ import annotations

import re

POSTGRESQL_SCHEMES = ("postgresql://", "postgres://")


def engine_of(url: str) -> str:
    """The engine a store URL names: ``postgres`` for ``postgresql://`` and ``postgres://``,
    ``sqlite`` for ``sqlite:///path`` or a bare path. Any other scheme is refused."""
    if url.startswith(POSTGRESQL_SCHEMES):
        return "postgres"
    sqlite_file(url)
    return "sqlite"


def sqlite_file(url: str) -> str:
    """The file a SQLite store URL names: ``sqlite:///path`` (``sqlite:////abs/path`` for an
    absolute one) or a bare path. Any other engine's URL is refused: what needs a file
    (a path to show, a file to copy) has none on PostgreSQL."""
    if url.startswith(POSTGRESQL_SCHEMES):
        raise ValueError(f"{masked_url(url)} is a PostgreSQL store, not a SQLite file")
    if url.startswith("sqlite:///"):
        return url.removeprefix("sqlite:///")
    if "://" in url:
        raise ValueError(f"{url.split('://')[0]}:// names no engine memvault has")
    return url


def masked_url(url: str) -> str:
    """A store URL as it may be shown: a password in it is left out."""
    return _PASSWORD_PARAMETER.sub(r"\1***", _CREDENTIALS.sub(r"://\1:***@", url))


def store_location(url: str) -> str:
    """Where the store at ``url`` is, as a person is told: the SQLite file, or the
    PostgreSQL URL without its password."""
    return masked_url(url) if engine_of(url) == "postgres" else sqlite_file(url)


_CREDENTIALS = re.compile(r"://([^:/@]*):[^@/]*@")
_PASSWORD_PARAMETER = re.compile(r"([?&]password=)[^&]*")
