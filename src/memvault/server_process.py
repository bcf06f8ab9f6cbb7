"""The one memvault server on this machine: finding it, starting it when none runs, and
stopping it, with the standard library only.

The server is the only process that opens the store, the vault writer and an embedding
model; the MCP relay, the hook and the CLI are its clients. When a client that needs the
server finds none answering, it starts one detached, under a lock in ``MEMVAULT_HOME`` so
that editor windows opening at once start exactly one. Files in ``MEMVAULT_HOME``:

- ``server.pid``: the server's pid on the first line, its URL on the second; written by
  whoever starts it (so a second client waits instead of starting another) and again by
  the server once it listens; removed when the server stops.
- ``server.lock``: held while a client checks for a server and starts one.
- ``serving.lock``: held by the server for as long as it runs (the system lets go when
  it ends, however it ends), so a second server on the same home refuses to start; it
  holds the server's pid and URL too, for ``memvault stop`` when ``server.pid`` is gone.
- ``logs/server.log``: a started server's output, rotated at start when over 5 MiB
  (``server.log.1`` … ``server.log.3`` are kept).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

from memvault.hook import paths
from memvault.hook.transport import Unavailable, split_url
from memvault.platforms import process_alive
from memvault.relay.http import Connection

TYPE_CHECKING = False  # typing is not imported at run time: a host waits for every import
if TYPE_CHECKING:
    from collections.abc import Mapping
    from subprocess import Popen

DEFAULT_URL = "http://127.0.0.1:3111"
PID_FILE = "server.pid"
LOCK_FILE = "server.lock"
SERVING_FILE = "serving.lock"
LOG_FILE = os.path.join("logs", "server.log")
LOG_LIMIT = 5 * 1024 * 1024
LOG_KEEP = 3
START_SECONDS = 30.0  # the embedding model loads before the server listens
STOP_SECONDS = 10.0
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class StartFailed(Exception):
    """No server answers, and none could be started; the message says why and where to look."""


class OtherMemory(StartFailed):
    """The server that answers serves another home or vault than this environment names;
    the message names both. Nothing is sent to it."""


class HomeServed(Exception):
    """A server already runs for this home: its ``pid``, ``url`` and who started it."""

    def __init__(self, home: str, pid: int, url: str, started_by: str) -> None:
        self.home, self.pid, self.url, self.started_by = home, pid, url, started_by
        by = f", started in the background by {started_by}" if started_by else ""
        super().__init__(
            f"a memvault server (pid {pid}) already serves {home} at {url or 'its address'}"
            f"{by}: stop it with `memvault stop`, or use it as it is"
        )


def server_url(environ: Mapping[str, str] = os.environ) -> str:
    """Where clients find the server, as the server's settings compute it: ``MEMVAULT_URL``
    (or ``AGENTMEMORY_URL``), else ``MEMVAULT_HOST`` and ``MEMVAULT_PORT``."""
    url = environ.get("MEMVAULT_URL") or environ.get("AGENTMEMORY_URL")
    if url:
        return url.rstrip("/")
    host = environ.get("MEMVAULT_HOST") or "127.0.0.1"
    port = environ.get("MEMVAULT_PORT") or environ.get("III_REST_PORT") or "3111"
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def server_secret(environ: Mapping[str, str] = os.environ) -> str | None:
    secret = (environ.get("MEMVAULT_SECRET") or environ.get("AGENTMEMORY_SECRET") or "").strip()
    return secret or None


def answers(url: str, seconds: float = 1.0) -> bool:
    """Whether a memvault server answers ``GET /agentmemory/livez`` at ``url``."""
    try:
        answer = Connection(url, None, time.monotonic() + seconds).exchange(
            "GET", "/agentmemory/livez", headers={"Accept": "application/json"}
        )
    except Unavailable:
        return False
    return answer.status == 200 and b'"memvault"' in answer.body


def ensure_running(environ: Mapping[str, str] = os.environ, seconds: float = START_SECONDS) -> str:
    """The URL of a server that answers: the running one, or one started now."""
    url = server_url(environ)
    if answers(url):
        return same_memory(url, environ)
    home = paths.home(environ)
    os.makedirs(os.path.join(home, "logs"), exist_ok=True)
    deadline = time.monotonic() + seconds
    lock = _lock(os.path.join(home, LOCK_FILE), deadline + seconds)
    try:
        if answers(url):  # another client started it while this one waited for the lock
            return same_memory(url, environ)
        log = os.path.join(home, LOG_FILE)
        recorded = read_pid_file(home)
        if recorded is not None and running(recorded[0]):
            _wait(url, deadline, log, pid=recorded[0])  # one is starting: not a second
            return same_memory(url, environ)
        by = f"memvault mcp (pid {os.getpid()})"  # said in the server's log and `status`
        command = [*serve_command(url, environ), "--started-by", by]
        _rotate(log)
        child = _spawn(command, log, environ)
        write_pid_file(home, child.pid, url)
        _wait(url, deadline, log, child=child)
        return same_memory(url, environ)
    finally:
        os.close(lock)


def identity(url: str, secret: str | None, seconds: float = 2.0) -> dict[str, object] | None:
    """What the server at ``url`` says it serves (``GET /agentmemory/server``: its pid, home,
    vault and who started it); None when it does not say (an older server, or an error)."""
    import json

    try:
        answer = Connection(url, secret, time.monotonic() + seconds).exchange(
            "GET", "/agentmemory/server", headers={"Accept": "application/json"}
        )
        found = json.loads(answer.body) if answer.status == 200 else None
    except (Unavailable, ValueError):
        return None
    return found if isinstance(found, dict) and found.get("service") == "memvault" else None


def other_memory(found: Mapping[str, object], environ: Mapping[str, str]) -> str | None:
    """One line naming both when the server that said ``found`` serves another home or
    vault than ``environ`` names; None when they agree (or the server did not say)."""
    home, vault = paths.home(environ), paths.vault(environ)
    their_home, their_vault = found.get("home"), found.get("vault")
    if not isinstance(their_home, str) or not isinstance(their_vault, str):
        return None
    if paths.same_place(home, their_home) and paths.same_place(vault, their_vault):
        return None
    return (
        f"the memvault server at {found.get('url') or 'its address'} (pid {found.get('pid')}) "
        f"serves home {their_home} with vault {their_vault}, but this environment names home "
        f"{os.path.abspath(home)} with vault {os.path.abspath(vault)}; nothing was sent to it. "
        "Give both the same MEMVAULT_HOME and MEMVAULT_VAULT, or stop that server "
        "(`memvault stop` with its MEMVAULT_HOME)"
    )


def same_memory(url: str, environ: Mapping[str, str]) -> str:
    """``url`` when its server serves the memory ``environ`` names; ``OtherMemory`` if not."""
    found = identity(url, server_secret(environ))
    problem = other_memory({**found, "url": url}, environ) if found else None
    if problem:
        raise OtherMemory(problem)
    return url


def claim_home(home: str, pid: int, url: str, started_by: str = "") -> int:
    """Hold ``serving.lock`` in ``home`` for as long as this process serves it (the
    descriptor returned stays open); ``HomeServed`` when another server holds it."""
    path = os.path.join(home, SERVING_FILE)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + 1.0  # a client's probe (``serving``) holds it an instant
    while not _try_lock(descriptor):
        if time.monotonic() < deadline:
            time.sleep(0.05)
            continue
        os.close(descriptor)
        held = _read_serving(home)
        recorded = read_pid_file(home)
        pid_held, url_held, by = held or (*(recorded or (0, "")), "")
        raise HomeServed(home, pid_held, url_held, by)
    os.ftruncate(descriptor, 0)
    os.write(descriptor, f"{pid}\n{url}\n{started_by}\n".encode())
    return descriptor


def serving(home: str) -> tuple[int, str, str] | None:
    """``(pid, url, started by)`` of the server holding ``home``'s ``serving.lock``; None
    when no server holds it."""
    path = os.path.join(home, SERVING_FILE)
    try:
        descriptor = os.open(path, os.O_RDWR)
    except OSError:
        return None
    try:
        if _try_lock(descriptor):
            return None  # nobody holds it (this probe let go again on close)
        return _read_serving(home)
    finally:
        os.close(descriptor)


def _read_serving(home: str) -> tuple[int, str, str] | None:
    try:
        with open(os.path.join(home, SERVING_FILE), encoding="utf-8") as file:
            lines = [*file.read().splitlines(), "", "", ""]
    except OSError:
        return None
    if not lines[0].strip().isdigit():
        return None
    return int(lines[0]), lines[1].strip(), lines[2].strip()


def _try_lock(descriptor: int) -> bool:
    try:
        if sys.platform == "win32":
            import msvcrt

            msvcrt.locking(descriptor, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def serve_command(url: str, environ: Mapping[str, str]) -> list[str]:
    """``python -m memvault.cli serve`` for a server at ``url``, which must be on this machine."""
    command = [sys.executable, "-m", "memvault.cli", "serve"]
    if not (environ.get("MEMVAULT_URL") or environ.get("AGENTMEMORY_URL")):
        return command  # the server reads MEMVAULT_HOST and MEMVAULT_PORT itself
    try:
        scheme, host, port, prefix = split_url(url)
    except ValueError as exc:
        raise StartFailed(str(exc)) from None
    if scheme != "http" or prefix or not (host in LOOPBACK or host.startswith("127.")):
        raise StartFailed(
            f"no memvault server answers at {url}, and memvault starts one only at an "
            "http:// address of this machine with no path: start it there yourself"
        )
    return [*command, "--host", host, "--port", str(port)]


def read_pid_file(home: str) -> tuple[int, str] | None:
    """``(pid, url)`` from ``server.pid``; None when there is none or it is unreadable."""
    try:
        with open(os.path.join(home, PID_FILE), encoding="utf-8") as file:
            lines = file.read().splitlines()
    except OSError:
        return None
    if not lines or not lines[0].strip().isdigit():
        return None
    return int(lines[0]), (lines[1].strip() if len(lines) > 1 else "")


def write_pid_file(home: str, pid: int, url: str) -> None:
    """Write ``server.pid`` whole (a reader never sees half of it)."""
    path = os.path.join(home, PID_FILE)
    partial = f"{path}.{os.getpid()}.tmp"
    with open(partial, "w", encoding="utf-8") as file:
        file.write(f"{pid}\n{url}\n")
    os.replace(partial, path)


def remove_pid_file(home: str, pid: int) -> None:
    """Remove ``server.pid`` if it still names ``pid`` (and not a server started since)."""
    recorded = read_pid_file(home)
    if recorded is not None and recorded[0] == pid:
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(home, PID_FILE))


def running(pid: int) -> bool:
    """Whether ``pid`` is a live memvault process (a reused pid of another program is not)."""
    if not process_alive(pid):  # on Windows, os.kill(pid, 0) would end the server
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            if stat.read().rpartition(b")")[2].split()[:1] == [b"Z"]:
                return False  # exited, not yet reaped
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return b"memvault" in cmdline.read()
    except OSError:
        return True  # no /proc (macOS, Windows): that it is alive is all there is to know


def stop(home: str, seconds: float = STOP_SECONDS) -> tuple[bool, str]:
    """Ask the server ``server.pid`` names to stop (SIGTERM), and wait for it to go:
    (whether no server runs now, what happened)."""
    import signal

    recorded = read_pid_file(home)
    pid_path = os.path.join(home, PID_FILE)
    held = serving(home)
    if held is not None and (recorded is None or not running(recorded[0])):
        recorded = held[:2]  # server.pid is gone or stale, but the home's server runs
    if recorded is None:
        return True, f"no memvault server is running (no {PID_FILE} in {home})"
    pid, url = recorded
    if not running(pid):
        remove_pid_file(home, pid)
        return True, f"no memvault server is running (removed a stale {pid_path}, pid {pid})"
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + seconds
    while running(pid):
        if time.monotonic() > deadline:
            return False, f"the server (pid {pid}) is still running {seconds:g} s after SIGTERM"
        time.sleep(0.1)
    remove_pid_file(home, pid)  # gone without removing it (killed, or a crash)
    return True, f"stopped the memvault server at {url or 'its address'} (pid {pid})"


def _spawn(command: list[str], log: str, environ: Mapping[str, str]) -> Popen:
    import subprocess

    detached: dict[str, object] = {"start_new_session": True}
    if sys.platform == "win32":
        flags = subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP
        detached = {"creationflags": flags}
    with open(log, "ab") as output:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=dict(environ),
            close_fds=True,
            **detached,  # type: ignore[arg-type]
        )


def _wait(
    url: str, deadline: float, log: str, *, child: Popen | None = None, pid: int | None = None
) -> None:
    while not answers(url):
        if child is not None and child.poll() is not None:
            raise StartFailed(
                f"the memvault server started for {url} exited with status "
                f"{child.returncode}; see {log}:\n{_tail(log)}"
            )
        if pid is not None and not running(pid):
            raise StartFailed(f"the memvault server starting for {url} exited; see {log}")
        if time.monotonic() > deadline:
            raise StartFailed(
                f"the memvault server at {url} did not answer within {START_SECONDS:g} s "
                f"of starting; see {log}"
            )
        time.sleep(0.1)


def _lock(path: str, deadline: float) -> int:
    """An exclusive lock on ``path``, held until the descriptor returned is closed."""
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    while not _try_lock(descriptor):
        if time.monotonic() > deadline:
            os.close(descriptor)
            raise StartFailed(f"another client holds {path} and has not let go")
        time.sleep(0.05)
    return descriptor


def _rotate(log: str) -> None:
    """Keep the log under ``LOG_LIMIT``: over it, ``server.log`` becomes ``server.log.1``
    and older files move one along, the oldest beyond ``LOG_KEEP`` dropped."""
    try:
        if os.path.getsize(log) <= LOG_LIMIT:
            return
    except OSError:
        return
    for n in range(LOG_KEEP - 1, 0, -1):
        if os.path.exists(f"{log}.{n}"):
            os.replace(f"{log}.{n}", f"{log}.{n + 1}")
    os.replace(log, f"{log}.1")


def _tail(log: str, lines: int = 20) -> str:
    try:
        with open(log, "rb") as file:
            file.seek(max(0, os.path.getsize(log) - 8192))
            text = file.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])
