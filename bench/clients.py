"""Clients' benchmark. The MCP relay: cold spawn of ``memvault mcp`` until its
``initialize`` is answered, and the relay's peak memory (VmHWM), against a running server;
the same with no server running (the relay starts one, which loads before it answers);
and, for comparison, the in-process stdio server ``memvault mcp`` ran before it became a
relay (the full CLI imported, a store opened, the MCP SDK loaded). The CLI: wall time of
``memvault search`` with a server running (it asks the server), and with none (it opens
the memory in process, searching by words).

.venv/bin/python bench/clients.py [--runs 10] [--cold-runs 3] [--in-process-runs 5]
    [--search-runs 10]

Spawns the console script a host runs (``memvault`` beside this Python). Servers run with
MEMVAULT_EMBEDDINGS=none unless --embeddings says otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _server import free_port, machine, percentile, running_server

from memvault import server_process

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}
RELAY = [str(Path(sys.executable).with_name("memvault")), "mcp"]
SEARCH = [str(Path(sys.executable).with_name("memvault")), "search", "checkout test", "--json"]
FRAGMENT = {
    "project": "demo-app",
    "summary": "The checkout test was flaky because the payment mock retried.",
    "facts": ["why: the mock retried", "fix: retries removed"],
}
IN_PROCESS = [
    sys.executable,
    "-c",
    # What `memvault mcp` did before: the console script imported the whole CLI first.
    "import memvault.cli.app\n"
    "from memvault.cli.board import open_memory\n"
    "from memvault.mcp_server import build_server\n"
    "with open_memory() as memory:\n"
    "    build_server(memory).run('stdio')\n",
]


def spawn_to_initialize(command: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Seconds from spawn to the initialize answer, and the process's VmHWM in bytes."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    process.stdin.flush()
    answer = json.loads(process.stdout.readline())
    elapsed = time.perf_counter() - start
    if "result" not in answer:
        process.kill()
        raise RuntimeError(f"initialize was not answered: {answer}")
    peak = _vm_hwm(process.pid)
    process.stdin.close()
    process.wait(30)
    return elapsed, peak


def _vm_hwm(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def search_wall(env: dict[str, str]) -> tuple[float, int]:
    """Seconds from spawn to exit of ``memvault search``, which must find something."""
    start = time.perf_counter()
    done = subprocess.run(SEARCH, env=env, capture_output=True, timeout=120)
    elapsed = time.perf_counter() - start
    if done.returncode != 0 or not json.loads(done.stdout)["results"]:
        raise RuntimeError(f"search failed: {done.stderr.decode(errors='replace')}")
    return elapsed, 0


def remember(url: str) -> None:
    body = json.dumps(FRAGMENT).encode()
    request = urllib.request.Request(
        f"{url}/agentmemory/remember", body, {"Content-Type": "application/json"}
    )
    urllib.request.urlopen(request, timeout=30).close()


def report(label: str, runs: list[tuple[float, int]]) -> dict[str, float]:
    seconds = [s for s, _ in runs]
    peaks = [p for _, p in runs if p]
    figures = {
        "median_s": statistics.median(seconds),
        "p90_s": percentile(seconds, 90),
        "max_s": max(seconds),
        "vmhwm_median_mb": statistics.median(peaks) / 2**20 if peaks else 0.0,
    }
    print(
        f"{label:<34} n={len(runs):<3} median {figures['median_s']:.3f} s  "
        f"p90 {figures['p90_s']:.3f} s  max {figures['max_s']:.3f} s  "
        f"VmHWM median {figures['vmhwm_median_mb']:.1f} MB"
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--cold-runs", type=int, default=3, help="with no server running")
    parser.add_argument("--in-process-runs", type=int, default=5, help="the stdio server before")
    parser.add_argument("--search-runs", type=int, default=10, help="memvault search, each way")
    parser.add_argument("--embeddings", default="none", help="MEMVAULT_EMBEDDINGS for servers")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVAULT_", "AGENTMEMORY_"))}
    base["MEMVAULT_EMBEDDINGS"] = args.embeddings

    # A relay or CLI speaks to the server of its own home (it refuses another home's), so
    # each is given the running server's.
    with running_server(MEMVAULT_EMBEDDINGS=args.embeddings) as url:
        env = {**base, "MEMVAULT_HOME": served_home(url), "MEMVAULT_URL": url}
        report("relay, server running", [spawn_to_initialize(RELAY, env) for _ in range(args.runs)])

    if args.cold_runs:
        cold = []
        for _ in range(args.cold_runs):
            with tempfile.TemporaryDirectory(prefix="memvault-bench-cold-") as home:
                env = {**base, "MEMVAULT_HOME": home, "MEMVAULT_PORT": str(free_port())}
                try:
                    cold.append(spawn_to_initialize(RELAY, env))
                finally:
                    server_process.stop(home)
        report("relay, no server (starts one)", cold)

    if args.in_process_runs:
        with tempfile.TemporaryDirectory(prefix="memvault-bench-inprocess-") as home:
            env = {**base, "MEMVAULT_HOME": home}
            runs = [spawn_to_initialize(IN_PROCESS, env) for _ in range(args.in_process_runs)]
        report("in-process stdio server (before)", runs)

    if args.search_runs:
        with running_server(MEMVAULT_EMBEDDINGS=args.embeddings) as url:
            remember(url)
            env = {**base, "MEMVAULT_HOME": served_home(url), "MEMVAULT_URL": url}
            runs = [search_wall(env) for _ in range(args.search_runs)]
        report("memvault search, server running", runs)
        with tempfile.TemporaryDirectory(prefix="memvault-bench-search-") as home:
            env = {**base, "MEMVAULT_HOME": home}
            saved = [*SEARCH[:1], "save", "--project", FRAGMENT["project"]]
            saved += ["--summary", FRAGMENT["summary"], "--fact", FRAGMENT["facts"][0]]
            subprocess.run(saved, env=env, check=True, capture_output=True, timeout=120)
            runs = [search_wall(env) for _ in range(args.search_runs)]
        report("memvault search, no server", runs)


def served_home(url: str) -> str:
    """The home the server at ``url`` serves."""
    with urllib.request.urlopen(f"{url}/agentmemory/server", timeout=10) as answer:
        return json.load(answer)["home"]


if __name__ == "__main__":
    main()
