"""Start a real `memvault serve` on a free loopback port for a benchmark, and a lean client."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_server(**env: str) -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="memvault-bench-") as home:
        port = free_port()
        environ = {**os.environ, "MEMVAULT_HOME": home, **env}
        proc = subprocess.Popen(
            [sys.executable, "-m", "memvault.cli", "serve", "--port", str(port)],
            env=environ,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(f"{url}/agentmemory/livez", timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    proc.kill()
                    raise RuntimeError("server did not start") from None
                time.sleep(0.1)
        try:
            yield url
        finally:
            proc.terminate()
            proc.wait(30)


@contextlib.contextmanager
def kept_copy(
    kept: Path, mode: str, prepare: Callable[[Path], None] | None = None
) -> Iterator[Path]:
    """A copy of the home a ``--keep`` run left in ``kept/mode``, for a server to be asked
    without changing the kept one; ``prepare`` changes the copy first (``bench/backlog.py``
    takes vectors away). Removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="memvault-kept-") as temp:
        home = Path(temp) / mode
        shutil.copytree(kept / mode, home, ignore=shutil.ignore_patterns("serving.lock", "*.pid"))
        if prepare is not None:
            prepare(home)
        yield home


def health(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/agentmemory/health", timeout=30) as r:
        return json.load(r)


class Connection:
    """One keep-alive HTTP/1.1 connection; enough for JSON POSTs to our own server."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str):
        self.reader, self.writer, self.host = reader, writer, host

    @classmethod
    async def open(cls, url: str) -> Connection:
        host, port = url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        return cls(reader, writer, f"{host}:{port}")

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        self.writer.write(
            b"POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (path.encode(), self.host.encode(), len(body), body)
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        for line in head.split(b"\r\n"):
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
        return status, await self.reader.readexactly(length)

    def close(self) -> None:
        self.writer.close()


def envelope(session: str, n: int, *, text: str = "") -> dict:
    return {
        "hookType": "post_tool_use",
        "sessionId": session,
        "project": "bench",
        "cwd": "/home/dev/code/bench",
        "timestamp": "2026-11-30T12:00:00.000Z",
        "eventId": f"{session}-{n}",
        "data": {
            "tool_name": "Bash",
            "tool_input": {"command": f"pytest tests/test_{n % 50}.py -q"},
            "tool_output": text or f"{n % 7} passed, 0 failed in 0.{n % 10}s",
        },
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def bootstrap_difference(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """Mean of a − b per question, and a 95 % bootstrap interval of it: the questions
    resampled 2,000 times, the same draws for both (a fixed seed, so a rerun prints the
    same interval)."""
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    rng = np.random.default_rng(13)
    means = diff[rng.integers(0, len(diff), size=(2000, len(diff)))].mean(axis=1)
    return float(diff.mean()), float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def machine() -> str:
    return f"{os.cpu_count()} cores, {_cpu()}, Python {sys.version.split()[0]}"


def _cpu() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.exists():
        return "unknown CPU"
    for line in cpuinfo.read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return ""
