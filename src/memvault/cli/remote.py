"""The running server, as the CLI's commands reach it.

The server is the one process that opens the store and loads an embedding model; a
command that reads or changes memory asks it over REST when it runs, and opens the memory
in its own process only when no server runs for this memory. Finding it costs no
imports beyond the standard library: ``memvault search`` with a server running is a
Python start, the CLI's own modules and one loopback request.

Which server is this memory's: the one ``MEMVAULT_URL`` (or ``AGENTMEMORY_URL``) names,
when set; otherwise the one whose ``server.pid`` is in ``MEMVAULT_HOME``, at the address
it recorded. A server listening at the default port for another home is not this
memory's, and is left alone.
"""

from __future__ import annotations

import json
import os
import time
from urllib.parse import quote, urlencode

from memvault import server_process
from memvault.hook import paths
from memvault.hook.transport import Unavailable
from memvault.relay.http import Connection

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

PROBE_SECONDS = 0.5  # an absent server refuses the connection at once; a hung one, this long
REQUEST_SECONDS = 120.0
LONG_SECONDS = 3600.0  # maintenance, reindexing and imports run as long as they need


class ServerRefused(Exception):
    """The server at ``url`` answered with an error: ``status`` and the ``error`` it named."""

    def __init__(self, url: str, status: int, error: str, body: Any = None) -> None:
        super().__init__(f"HTTP {status}: {error}")
        self.url = url
        self.status = status
        self.error = error
        self.body = body if isinstance(body, dict) else {}


class NotAnswering(Exception):
    """A server runs for this memory (its pid is alive) but does not answer: it is still
    starting, or hung. Opening the memory here would make a second writer."""


class OtherMemory(Exception):
    """The server found serves another home or vault than this environment names; the
    message names both. Nothing is sent to it."""


class Server:
    """This memory's running server at ``url``."""

    def __init__(self, url: str, secret: str | None) -> None:
        self.url = url
        self.secret = secret

    def get(self, path: str, query: Mapping[str, Any] | None = None, **kw: Any) -> Any:
        return self.call("GET", path, query=query, **kw)

    def post(self, path: str, body: Any = None, **kw: Any) -> Any:
        return self.call("POST", path, body=body if body is not None else {}, **kw)

    def call(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        query: Mapping[str, Any] | None = None,
        seconds: float = REQUEST_SECONDS,
    ) -> Any:
        """The JSON the server answers to ``method /agentmemory{path}``; ``ServerRefused`` for
        an error answer, ``Unavailable`` when the server went away."""
        target = f"/agentmemory{path}"
        given = {k: _query_value(v) for k, v in (query or {}).items() if v is not None}
        if given:
            target += "?" + urlencode(given, doseq=True)
        headers = {"Accept": "application/json"}
        payload = b""
        if body is not None:
            payload = json.dumps(body, ensure_ascii=False).encode()
            headers["Content-Type"] = "application/json"
        answer = Connection(self.url, self.secret, time.monotonic() + seconds).exchange(
            method, target, payload, headers
        )
        try:
            decoded = json.loads(answer.body) if answer.body.strip() else None
        except ValueError:
            decoded = None
        if 200 <= answer.status < 300:
            return decoded
        error = decoded.get("error") if isinstance(decoded, dict) else None
        if not isinstance(error, str):
            error = " ".join(answer.body.decode("utf-8", "replace").split())[:300] or "no detail"
        raise ServerRefused(self.url, answer.status, error, decoded)


def find(environ: Mapping[str, str] = os.environ) -> Server | None:
    """This memory's server when one runs and answers; None when none runs (the command
    then works in process). ``NotAnswering`` when one runs but does not answer."""
    secret = server_process.server_secret(environ)
    if environ.get("MEMVAULT_URL") or environ.get("AGENTMEMORY_URL"):
        url = server_process.server_url(environ)
        if not server_process.answers(url, PROBE_SECONDS):
            return None
        return _checked(Server(url, secret), environ)
    home = paths.home(environ)
    recorded = server_process.read_pid_file(home)
    if recorded is None or not server_process.running(recorded[0]):
        return None
    pid, url = recorded
    url = url or server_process.server_url(environ)
    if server_process.answers(url, PROBE_SECONDS):
        return _checked(Server(url, secret), environ)
    raise NotAnswering(
        f"a memvault server (pid {pid}) runs for {home} but does not answer at {url}: it "
        "may still be starting (try again in a moment), or stop it with `memvault stop`"
    )


def _checked(server: Server, environ: Mapping[str, str]) -> Server:
    """``server`` when it serves the memory ``environ`` names; ``OtherMemory`` if not."""
    try:
        server_process.same_memory(server.url, environ)
    except server_process.OtherMemory as exc:
        raise OtherMemory(str(exc)) from None
    return server


def path_part(value: str) -> str:
    """``value`` as one segment of a route's path (a fragment id keeps its slashes)."""
    return quote(value, safe="/")


def _query_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


__all__ = [
    "NotAnswering",
    "OtherMemory",
    "Server",
    "ServerRefused",
    "Unavailable",
    "find",
    "path_part",
]
