"""Helpers for tests: envelopes, and prerequisites that CI must have."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import httpx
import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_tool(name: str) -> str:
    """The path of an external program a test needs. Missing: a skip locally, a failure in CI."""
    path = shutil.which(name)
    if path is None:
        message = f"`{name}` is not installed"
        if IN_CI:
            pytest.fail(f"{message}, and CI must run every test")
        pytest.skip(message)
    return path


def envelope(session: str = "s1", n: int = 0, **overrides) -> dict:
    """A valid post_tool_use envelope; ``n`` varies its event id and content."""
    body = {
        "hookType": "post_tool_use",
        "sessionId": session,
        "project": "demo-app",
        "cwd": "/home/dev/code/demo-app",
        "timestamp": f"2026-11-30T10:00:{n % 60:02d}.000Z",
        "eventId": f"{session}-e{n}",
        "data": {
            "tool_name": "Bash",
            "tool_input": {"command": f"npm test -- case{n}"},
            "tool_output": f"{n} passed",
        },
    }
    body.update(overrides)
    return body


def observation_scores(store, query, project: str = "demo") -> dict[str, float]:
    """The store's lexical hits among a project's observations for ``query`` (a
    ``LexicalQuery``), by document key: what a migration's before and after compare."""
    hits = store.lexical_search(query, kinds=["observation"], project=project)
    keys = {doc_id: doc.key for doc_id, doc in store.documents([i for i, _ in hits]).items()}
    return {keys[doc_id]: score for doc_id, score in hits}


class Server:
    """A real `memvault serve` process on a free loopback port."""

    def __init__(self, home: Path, env: dict[str, str] | None = None) -> None:
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "MEMVAULT_HOME": str(home), **(env or {})}
        self.env.pop("MEMVAULT_URL", None)
        self.process: subprocess.Popen | None = None

    # A server answers in about 2 s; on a machine busy with other work, importing alone
    # has taken over 30 s, which is no failure of the server's.
    def start(self, timeout: float = 120) -> Server:
        self.home.mkdir(parents=True, exist_ok=True)
        log = (self.home / "server.log").open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "memvault.cli", "serve", "--port", str(self.port)],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited early:\n{self.log()}")
            try:
                if httpx.get(f"{self.url}/agentmemory/livez", timeout=0.5).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"server did not answer within {timeout} s:\n{self.log()}")

    def log(self) -> str:
        path = self.home / "server.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(30)

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(predicate, timeout: float = 10.0, interval: float = 0.05):
    """Poll until ``predicate()`` is truthy; return its value or fail naming the wait."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout} s: {predicate.__doc__ or predicate}")
        time.sleep(interval)


AGENTMEMORY_VERSION = "0.9.29"


def agentmemory_package() -> Path:
    """agentmemory's published npm package, fetched once into a cache outside the repo.

    Only the package tarball is needed: its hook scripts import nothing but Node built-ins.
    """
    require_tool("node")
    npm = require_tool("npm")
    cache = Path(os.environ.get("MEMVAULT_TEST_CACHE", Path.home() / ".cache" / "memvault-tests"))
    root = cache / f"agentmemory-{AGENTMEMORY_VERSION}"
    if (root / "plugin" / "scripts" / "post-tool-use.mjs").exists():
        return root
    npm_pack(npm, f"@agentmemory/agentmemory@{AGENTMEMORY_VERSION}", root)
    return root


def npm_pack(npm: str, spec: str, target: Path) -> None:
    """Fetch the npm package ``spec`` and unpack it as the folder ``target``, whole or not
    at all (a run stopped half-way leaves no half a package behind)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=target.parent))
    try:
        subprocess.run(
            [npm, "pack", spec, "--silent"],
            cwd=work,
            check=True,
            capture_output=True,
            timeout=300,
        )
        (tarball,) = work.glob("*.tgz")
        with tarfile.open(tarball) as archive:
            archive.extractall(work, filter="data")
        os.replace(work / "package", target)
    finally:
        shutil.rmtree(work, ignore_errors=True)


FIXTURES = Path(__file__).resolve().parent / "fixtures"


def fixtures_dir() -> Path:
    """Host payloads, transcripts and an Obsidian vault, kept in the repository
    (``tests/fixtures/README.md`` says where each comes from)."""
    return FIXTURES


def shared_dir() -> Path:
    """The folder beside the repository that holds licensed benchmark data (LoCoMo), which
    may not be committed; tests that need it skip without it (and fail in CI)."""
    here = Path(__file__).resolve().parents[1]
    path = here.parent / "shared"
    if not path.is_dir():
        message = (
            f"the licensed benchmark data is not here (expected {path.name}/ beside the repository)"
        )
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return path
