"""Hook command benchmark: one invocation's wall time, process start to exit, memvault's
``memvault-hook`` beside agentmemory's Node hook script for the same Claude Code PostToolUse
payload, against a live server and against a dead one (nothing listening).

.venv/bin/python bench/hook.py [--runs 40]

agentmemory's published npm package is fetched once with npm into the same cache the tests
use (``$MEMVAULT_TEST_CACHE``, else ``~/.cache/memvault-tests``); node and npm must be
installed. Invocations alternate between the two commands so both see the same machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _server import free_port, machine, percentile, running_server

AGENTMEMORY = "@agentmemory/agentmemory@0.9.29"
TARGET_RATIO = 0.7


def agentmemory_script() -> Path:
    cache = Path(os.environ.get("MEMVAULT_TEST_CACHE", Path.home() / ".cache" / "memvault-tests"))
    root = cache / f"agentmemory-{AGENTMEMORY.rsplit('@', 1)[1]}"
    script = root / "plugin" / "scripts" / "post-tool-use.mjs"
    if script.exists():
        return script
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=cache))
    try:
        subprocess.run(["npm", "pack", AGENTMEMORY, "--silent"], cwd=work, check=True)
        (tarball,) = work.glob("*.tgz")
        with tarfile.open(tarball) as archive:
            archive.extractall(work, filter="data")
        os.replace(work / "package", root)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return script


def ours() -> list[str]:
    """The console script hosts run (``python -m`` costs runpy's imports on top)."""
    script = Path(sys.executable).parent / "memvault-hook"
    if script.exists():
        return [str(script), "claude-code"]
    return [sys.executable, "-m", "memvault.hook", "claude-code"]


def payload(session: str, n: int, project: Path) -> bytes:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": str(project / "transcript.jsonl"),
            "cwd": str(project),
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": f"pytest tests/test_{n}.py -q"},
            "tool_response": {"stdout": f"{n} passed in 0.{n % 10}s", "interrupted": False},
            "tool_use_id": f"toolu_{session}_{n:04d}",
        }
    ).encode()


def timed(command: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        command,
        input=stdin,
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    return time.perf_counter() - started


def observations(url: str, session: str) -> int:
    with urllib.request.urlopen(
        f"{url}/agentmemory/observations?sessionId={session}&limit=5000", timeout=30
    ) as response:
        return len(json.load(response)["observations"])


def measure(runs: int, url: str, work: Path, script: Path) -> dict[str, list[float]]:
    project = work / "demo-app"
    project.mkdir(exist_ok=True)
    dead = f"http://127.0.0.1:{free_port()}"
    base = {"PATH": os.environ["PATH"], "HOME": str(work)}
    targets = {
        ("memvault-hook", "live"): (
            ours(),
            {**base, "MEMVAULT_URL": url, "MEMVAULT_HOME": str(work / "live")},
        ),
        ("memvault-hook", "dead"): (
            ours(),
            {**base, "MEMVAULT_URL": dead, "MEMVAULT_HOME": str(work / "dead")},
        ),
        ("agentmemory node", "live"): (["node", str(script)], {**base, "AGENTMEMORY_URL": url}),
        ("agentmemory node", "dead"): (["node", str(script)], {**base, "AGENTMEMORY_URL": dead}),
    }
    times: dict[str, list[float]] = {f"{who} / {server}": [] for who, server in targets}
    order = list(targets)
    for n in range(runs + 3):  # the first three warm caches and are not counted
        for who, server in order:
            command, env = targets[(who, server)]
            session = f"bench-{who.split()[0].removesuffix('-hook')}-{server}"
            elapsed = timed(command, payload(session, n, project), env, project)
            if n >= 3:
                times[f"{who} / {server}"].append(elapsed)
        order = order[1:] + order[:1]  # nobody always goes first
    return times


def baseline(command: list[str], runs: int) -> float:
    return statistics.median(
        timed(command, b"", {"PATH": os.environ["PATH"]}, Path.cwd()) for _ in range(runs)
    )


def report(times: dict[str, list[float]], runs: int) -> None:
    print(f"\none hook invocation, process start to exit, {runs} runs each ({machine()})\n")
    print(f"{'command / server':32} {'median':>9} {'p95':>9}")
    for name, values in times.items():
        median, p95 = statistics.median(values) * 1000, percentile(values, 95) * 1000
        print(f"{name:32} {median:7.1f}ms {p95:7.1f}ms")
    for server in ("live", "dead"):
        mine = statistics.median(times[f"memvault-hook / {server}"])
        node = statistics.median(times[f"agentmemory node / {server}"])
        verdict = "meets" if mine <= TARGET_RATIO * node else "misses"
        print(f"{server}: memvault-hook / node = {mine / node:.2f} ({verdict} ≤ {TARGET_RATIO})")
    python = baseline([sys.executable, "-c", "pass"], 10) * 1000
    node = baseline(["node", "-e", "0"], 10) * 1000
    print(f"bare start-up: python {python:.1f} ms, node {node:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    script = agentmemory_script()
    with running_server() as url, tempfile.TemporaryDirectory(prefix="memvault-hook-") as work:
        times = measure(args.runs, url, Path(work), script)
        report(times, args.runs)
        stored = {
            who: observations(url, f"bench-{who}-live") for who in ("memvault", "agentmemory")
        }
        print(f"events stored from the live runs: {stored} (of {args.runs + 3} each)")


if __name__ == "__main__":
    main()
