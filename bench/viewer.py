"""Web viewer benchmark: the board page with 1,000 rows and the timeline of a 100,000-event
session, rendered in Chromium against a real server; and what each page weighs.

.venv/bin/python bench/viewer.py [--runs 15] [--events 100000]

Render time is the browser's own Navigation Timing: from the start of the navigation to the
end of the load event (the HTML answered and parsed, its stylesheet and script loaded, the
page laid out). Each run opens a new browser context, so nothing is cached. Medians, as the
machine is shared.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _server import health, machine, running_server
from board import ROWS, seed

BULK = 500
SESSION = "bench-long-session"

_TIMING = """() => {
  const n = performance.getEntriesByType("navigation")[0];
  const assets = performance.getEntriesByType("resource")
    .filter(r => r.name.includes("/static/"))
    .reduce((sum, r) => sum + r.transferSize, 0);
  return {
    server: n.responseStart - n.requestStart,
    load: n.loadEventEnd - n.startTime,
    transferred: n.transferSize,
    html: n.decodedBodySize,
    assets: assets,
  };
}"""


def ingest(url: str, events: int) -> float:
    """Store one session of ``events`` tool events through /observe/bulk; seconds taken."""
    began = time.perf_counter()
    for start in range(0, events, BULK):
        batch = [
            {
                "hookType": "post_tool_use",
                "sessionId": SESSION,
                "project": "bench",
                "cwd": "/bench",
                "timestamp": f"2026-11-30T10:{(n // 60) % 60:02d}:{n % 60:02d}.000Z",
                "eventId": f"e{n}",
                "data": {"tool_name": "Bash", "tool_input": {"command": f"make test-{n}"}},
            }
            for n in range(start, min(start + BULK, events))
        ]
        request = urllib.request.Request(
            f"{url}/agentmemory/observe/bulk",
            data=json.dumps({"observations": batch}).encode(),
            headers={"Content-Type": "application/json"},
        )
        urllib.request.urlopen(request, timeout=120).close()
    return time.perf_counter() - began


def settle(url: str, timeout: float = 600) -> str:
    """Wait until the index has taken every event in and no job is queued, so the pages
    are measured without the server's own background work beside them; says how long."""
    began = time.perf_counter()
    while time.perf_counter() - began < timeout:
        found = health(url)
        queue = found["queue"]
        if (found.get("index") or {}).get("caughtUp") and not (
            queue["jobsPending"] or queue["jobsRunning"]
        ):
            waited = time.perf_counter() - began
            return f"the server's background work on them was done {waited:.0f} s later"
        time.sleep(1)
    backlog = (found.get("index") or {}).get("eventsNotIndexed")
    return (
        f"the server's background work was still going after {timeout:.0f} s "
        f"({backlog} events not indexed, {queue['jobsPending']} jobs pending): measured beside it"
    )


def measure(browser, url: str, runs: int) -> dict:
    found = []
    for _ in range(runs):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.goto(url, wait_until="load")
        found.append(page.evaluate(_TIMING))
        context.close()
    return {
        "server_ms": statistics.median(f["server"] for f in found),
        "load_ms": statistics.median(f["load"] for f in found),
        "load_ms_max": max(f["load"] for f in found),
        "transferred": found[-1]["transferred"],
        "html": found[-1]["html"],
        "assets": found[-1]["assets"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--events", type=int, default=100_000, help="0: the board alone")
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        sys.exit("chromium is not installed (make test installs it)")
    from playwright.sync_api import sync_playwright

    print(f"machine: {machine()}")
    vault = Path(tempfile.mkdtemp(prefix="memvault-bench-vault-"))
    try:
        seed(vault)
        with running_server(MEMVAULT_VAULT=str(vault), MEMVAULT_EMBEDDINGS="none") as url:
            pages = {f"board, {ROWS} rows": "/"}
            if args.events:
                took = ingest(url, args.events)
                print(f"stored one session of {args.events} events in {took:.1f} s")
                print(settle(url))
                pages[f"timeline, first page of {args.events} events"] = f"/sessions/{SESSION}"
                middle = f"/sessions/{SESSION}?after={args.events // 2 + 7}"
                pages["timeline, a page past the middle"] = middle
            pages |= {
                "sessions": "/sessions",
                "fragments": "/fragments",
                "health": "/health",
                "search": "/search?q=make+test",
            }
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=chromium, args=["--no-sandbox", "--disable-gpu"]
                )
                print(
                    f"{'page':45} {'load ms':>8} {'max':>6} {'server ms':>9} "
                    f"{'sent KB':>8} {'HTML KB':>8} {'CSS+JS KB':>9}"
                )
                for name, path in pages.items():
                    m = measure(browser, url + path, args.runs)
                    print(
                        f"{name:45} {m['load_ms']:8.0f} {m['load_ms_max']:6.0f} "
                        f"{m['server_ms']:9.0f} {m['transferred'] / 1024:8.1f} "
                        f"{m['html'] / 1024:8.1f} {m['assets'] / 1024:9.1f}"
                    )
                browser.close()
    finally:
        shutil.rmtree(vault, ignore_errors=True)
    print(f"medians of {args.runs} cold loads each (a new browser context per load)")


if __name__ == "__main__":
    main()
