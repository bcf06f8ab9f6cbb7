"""Stale citations on a real server: a memory whose cited files are gone from the asking
session's project folder is marked in the block and ranks after the one whose files are
there; `GET /agentmemory/stale-fragments`, `memvault doctor` and the viewer's fragments
page list the fragments every cited file of which is gone, with the command that
deletes one."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest

from memvault.memory.staleness import FileCheck


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "shop"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "keep.ts").write_text("export const kept = 1;\n")
    return folder


@pytest.fixture
def api(start_server):
    running = start_server()
    with httpx.Client(base_url=f"{running.url}/agentmemory", timeout=30) as client:
        client.running = running  # type: ignore[attr-defined]
        yield client


def _remember(api, summary: str, files: list[str]) -> str:
    answer = api.post(
        "/remember",
        json={"project": "shop", "summary": summary, "facts": [summary], "files": files},
    )
    assert answer.status_code == 201, answer.text
    return answer.json()["memory"]["id"]


def test_gone_files_are_marked_in_the_block_rank_lower_and_are_listed(api, project, tmp_path):
    gone = _remember(api, "Checkout totals are rounded in the legacy cart module.", ["src/old.ts"])
    _remember(api, "Checkout totals are cached per cart module.", ["src/keep.ts"])
    both = _remember(
        api, "Checkout totals module splits taxes per cart line.", ["src/keep.ts", "src/tax.ts"]
    )
    started = api.post(
        "/session/start",
        json={"sessionId": "stale-1", "project": "shop", "cwd": str(project), "agentId": "t"},
    )
    assert started.status_code == 200, started.text
    block = api.post(
        "/context",
        json={"project": "shop", "query": "checkout totals cart module", "sessionId": "stale-2"},
    ).json()["context"]
    assert "(files gone" not in block  # a session memvault does not know: no folder to check

    started = api.post(
        "/session/start",
        json={"sessionId": "stale-2", "project": "shop", "cwd": str(project), "agentId": "t"},
    ).json()
    text = started["context"]
    assert "(files gone: src/old.ts)" in text, text
    assert "(files gone: src/tax.ts)" in text, text
    assert "src/keep.ts" not in text.split("files gone", 1)[1].split(")")[0]
    # The standing block ranks by importance and recency: the memories whose files are
    # gone come after the one whose files are all there.
    assert text.index("cached per cart module") < text.index("rounded in the legacy cart")
    assert text.index("cached per cart module") < text.index("splits taxes per cart line")

    listed = api.get("/stale-fragments").json()["fragments"]
    assert [g["id"] for g in listed] == [gone]  # `both` still has one of its files
    assert listed[0]["files"] == ["src/old.ts"]
    assert listed[0]["folder"] == str(project)
    assert listed[0]["fix"] == f'memvault fragments delete "{gone}"'
    assert both not in {g["id"] for g in listed}

    page = httpx.get(f"{api.running.url}/fragments", timeout=30)
    assert page.status_code == 200
    assert 'id="files-gone"' in page.text and gone in page.text

    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    environ.update(
        MEMVAULT_HOME=str(api.running.home),
        MEMVAULT_URL=api.running.url,
        HOME=str(tmp_path),
        MEMVAULT_EMBEDDINGS="none",
    )
    doctor = subprocess.run(
        [sys.executable, "-m", "memvault.cli", "doctor", "--json"],
        capture_output=True,
        text=True,
        env=environ,
        cwd=tmp_path,
        timeout=120,
    )
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    cited = checks["cited files"]
    assert cited["level"] == "warn" and gone in cited["finding"], cited
    assert f'memvault fragments delete "{gone}"' in cited["fix"]


def test_the_check_stats_each_file_once_a_minute_and_stops_at_its_time_bound(tmp_path):
    (tmp_path / "a.ts").write_text("")
    check = FileCheck(ttl=60, bound=0.02)
    assert check.gone(tmp_path, ["a.ts", "b.ts", "../outside.ts", "/elsewhere/c.ts"]) == ["b.ts"]
    (tmp_path / "a.ts").unlink()
    assert check.gone(tmp_path, ["a.ts"]) == []  # the cached answer, within its minute
    assert FileCheck(ttl=0).gone(tmp_path, ["a.ts"]) == ["a.ts"]
    # Past the deadline nothing new is looked at: an unchecked file counts as there.
    assert FileCheck().gone(tmp_path, ["x.ts", "y.ts"], deadline=0.0) == []
