"""Cost in view: the tokens memory blocks gave agents, per day, project and session, in
`/health`, `memvault status` and the viewer's cost page (an inline SVG chart of 30 days),
and MEMVAULT_CONTEXT_TOKENS capping each block, on a real server."""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys

import httpx

from memvault.vault.remember import Draft

CAP = 150


def _fill(api, project: str, n: int) -> None:
    for i in range(n):
        summary = f"Invoice export step {i} writes the ledger batch file number {i}."
        answer = api.post(
            "/remember",
            json={"project": project, "summary": summary, "facts": [summary, f"step: {i}"]},
        )
        assert answer.status_code == 201, answer.text


def test_tokens_injected_show_in_health_status_and_the_viewer_and_each_block_is_capped(
    start_server, tmp_path
):
    running = start_server({"MEMVAULT_CONTEXT_TOKENS": str(CAP)})
    with httpx.Client(base_url=f"{running.url}/agentmemory", timeout=30) as api:
        _fill(api, "ledger", 12)
        _fill(api, "payroll", 2)
        given = []
        for session, project in (("cost-1", "ledger"), ("cost-2", "ledger"), ("cost-3", "payroll")):
            api.post(
                "/session/start",
                json={"sessionId": session, "project": project, "cwd": "/x", "agentId": "t"},
            )
            block = api.post(
                "/context",
                json={
                    "project": project,
                    "query": "invoice export ledger batch",
                    "sessionId": session,
                },
            ).json()
            assert block["tokens"] <= CAP, block
            given.append(block)
        uncapped = api.post("/context", json={"project": "ledger", "budget": 5000}).json()
        assert uncapped["tokens"] > CAP  # the cap is the default, a request may ask for more

        injected = api.get("/health").json()["injected"]
    assert injected["capPerBlock"] == CAP and injected["days"] == 30
    assert len(injected["perDay"]) == 30
    assert injected["perDay"][-1]["day"] == dt.datetime.now(dt.UTC).date().isoformat()
    assert injected["perDay"][-1]["tokens"] == injected["today"] == injected["tokens"] > 0
    projects = {p["project"]: p for p in injected["perProject"]}
    sessions = {s["sessionId"]: s for s in injected["perSession"]}
    assert set(projects) == {"ledger", "payroll"} and set(sessions) == {
        "cost-1",
        "cost-2",
        "cost-3",
    }
    assert (
        projects["ledger"]["tokens"] == sessions["cost-1"]["tokens"] + sessions["cost-2"]["tokens"]
    )
    assert sum(s["tokens"] for s in sessions.values()) == injected["tokens"]
    assert all(s["tokens"] <= CAP * s["blocks"] for s in sessions.values())

    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    environ.update(MEMVAULT_HOME=str(running.home), MEMVAULT_URL=running.url, COLUMNS="250")
    status = subprocess.run(
        [sys.executable, "-m", "memvault.cli", "status"],
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
    )
    assert status.returncode == 0, status.stderr
    words = " ".join(status.stdout.split())
    assert f"{injected['today']:,} today" in words, status.stdout
    rows = {
        cells[0]: cells[1]
        for line in status.stdout.splitlines()
        if len(cells := [c.strip() for c in line.strip("│ ").split("│")]) == 2
    }
    assert rows["tokens per project"].startswith("ledger "), rows
    assert "cost-1" in rows["tokens per session"], rows
    assert f"each at most {CAP}" in words

    page = httpx.get(f"{running.url}/cost", timeout=30)
    assert page.status_code == 200
    chart = re.search(r'<svg class="chart" id="chart".*?</svg>', page.text, re.S)
    assert chart and chart.group(0).count("<rect") == 30
    assert "<script" not in chart.group(0)
    assert "ledger" in page.text and "cost-3" in page.text and f"at most {CAP}" in page.text


def test_the_tally_reads_only_new_events_and_keeps_a_window_of_days(memory):
    memory.remember(Draft(project="p", summary="Use Redis for sessions", facts=["redis: sessions"]))
    memory.context.start_session({"sessionId": "s1", "project": "p", "cwd": "/x", "agentId": "a"})
    first = memory.cost.report()
    assert first.blocks == 1 and first.tokens > 0
    assert memory.cost.report() == first  # nothing new: the same tally
    memory.context.start_session({"sessionId": "s2", "project": "p", "cwd": "/x", "agentId": "a"})
    second = memory.cost.report()
    assert second.blocks == 2 and second.tokens == 2 * first.tokens
    later = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=30)
    assert memory.cost.report(today=later).tokens == 0  # out of the window, forgotten
