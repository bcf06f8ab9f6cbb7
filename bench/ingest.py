"""Ingest benchmark: /observe latency at a steady rate, saturation, bulk, and RSS at 1M events.

    .venv/bin/python bench/ingest.py            # everything (a few minutes)
    .venv/bin/python bench/ingest.py --quick    # smaller counts, for a smoke run

Prints one block of figures; docs/benchmarks.md records the latest.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _server import Connection, envelope, health, machine, percentile, running_server


async def steady(url: str | list[str], rate: int, seconds: float, connections: int = 16) -> dict:
    """Open-loop load: requests are due every 1/rate s; latency counts from the due time,
    so a stalled server cannot hide its queueing (no coordinated omission). Given several
    servers (replicas), request n goes to server n mod their number. The driver's own
    garbage collector is off meanwhile: its pauses (20–30 ms) are not the server's."""
    gc.freeze()
    gc.disable()
    try:
        return await _steady([url] if isinstance(url, str) else url, rate, seconds, connections)
    finally:
        gc.enable()
        gc.unfreeze()


async def _steady(urls: list[str], rate: int, seconds: float, connections: int) -> dict:
    pools: list[asyncio.Queue[Connection]] = []
    for url in urls:
        pool: asyncio.Queue[Connection] = asyncio.Queue()
        for _ in range(max(connections // len(urls), 1)):
            pool.put_nowait(await Connection.open(url))
        pools.append(pool)
    latencies: list[float] = []
    failures = 0
    total = int(rate * seconds)
    start = time.perf_counter() + 0.05

    async def one(n: int) -> None:
        nonlocal failures
        due = start + n / rate
        body = json.dumps(envelope("steady", n)).encode()
        pool = pools[n % len(pools)]
        conn = await pool.get()
        try:
            status, _ = await conn.post("/agentmemory/observe", body)
        finally:
            pool.put_nowait(conn)
        latencies.append(time.perf_counter() - due)
        failures += status != 201

    tasks = []
    for n in range(total):
        delay = start + n / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(n)))
    await asyncio.gather(*tasks)
    for pool in pools:
        while not pool.empty():
            pool.get_nowait().close()
    ms = [x * 1000 for x in latencies]
    return {
        "rate": rate,
        "events": total,
        "failures": failures,
        "p50_ms": statistics.median(ms),
        "p99_ms": percentile(ms, 99),
        "max_ms": max(ms),
    }


async def saturate(url: str, seconds: float, connections: int = 32) -> dict:
    """Closed loop: every connection posts as fast as answers come back."""
    stop = time.perf_counter() + seconds
    counts = [0] * connections

    async def worker(i: int) -> None:
        conn = await Connection.open(url)
        n = 0
        while time.perf_counter() < stop:
            body = json.dumps(envelope(f"sat-{i}", n)).encode()
            status, _ = await conn.post("/agentmemory/observe", body)
            assert status == 201, status
            n += 1
        counts[i] = n
        conn.close()

    began = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(connections)))
    elapsed = time.perf_counter() - began
    return {"events": sum(counts), "events_per_s": sum(counts) / elapsed}


async def bulk_http(url: str, events: int, *, session: str, concurrency: int = 2) -> dict:
    batches = [
        json.dumps(
            {"observations": [envelope(session, n) for n in range(i, min(i + 500, events))]}
        ).encode()
        for i in range(0, events, 500)
    ]
    queue = list(reversed(batches))

    async def worker() -> None:
        conn = await Connection.open(url)
        while queue:
            status, body = await conn.post("/agentmemory/observe/bulk", queue.pop())
            assert status == 200, (status, body[:200])
        conn.close()

    began = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - began
    return {"events": events, "events_per_s": events / elapsed}


def bulk_python(events: int) -> dict:
    from memvault import Memory

    with tempfile.TemporaryDirectory() as home, Memory.open(home=Path(home)) as memory:
        items = [envelope("py", n) for n in range(events)]
        began = time.perf_counter()
        result = memory.observe_many(items)
        elapsed = time.perf_counter() - began
    assert result.imported == events, result.errors[:3]
    return {"events": events, "events_per_s": events / elapsed}


async def rss_over(url: str, events: int, samples: int = 10) -> dict:
    step = events // samples
    readings = []
    for i in range(samples):
        await bulk_http(url, step, session=f"rss-{i}")
        report = health(url)
        readings.append(
            (report["store"]["events"], round(report["process"]["rssBytes"] / 2**20, 1))
        )
    return {"readings_events_mib": readings}


async def main(quick: bool) -> None:
    scale = 0.1 if quick else 1.0
    print(f"machine: {machine()}")
    with running_server() as url:
        for conn_rate in (200,):
            s = await steady(url, conn_rate, 30 * scale)
            print(
                f"/observe steady {s['rate']}/s x {s['events']}: p50 {s['p50_ms']:.2f} ms, "
                f"p99 {s['p99_ms']:.2f} ms, max {s['max_ms']:.1f} ms, failures {s['failures']}"
            )
        sat = await saturate(url, 15 * scale)
        print(f"/observe saturated (32 connections): {sat['events_per_s']:,.0f} events/s")
        for clients in (1, 2):
            b = await bulk_http(
                url, int(200_000 * scale), session=f"bulk-{clients}", concurrency=clients
            )
            print(
                f"/observe/bulk (500 per request, {clients} client{'s' if clients > 1 else ''}): "
                f"{b['events_per_s']:,.0f} events/s"
            )
    p = bulk_python(int(200_000 * scale))
    print(f"Memory.observe_many: {p['events_per_s']:,.0f} events/s")
    with running_server() as url:
        r = await rss_over(url, int(1_000_000 * scale))
        print(
            "server RSS (events stored, MiB): "
            + ", ".join(f"{e:,}: {m}" for e, m in r["readings_events_mib"])
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    asyncio.run(main(parser.parse_args().quick))
