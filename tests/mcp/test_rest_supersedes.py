"""`supersedes` over REST on a real server: `POST /agentmemory/remember` and
`PATCH /agentmemory/fragments/{id}` mark the older fragment, and a bad id is a 400 naming
the field, with nothing written."""

from __future__ import annotations

import httpx
import pytest

from memvault.vault.fragments import Fragment


@pytest.fixture
def rest(server):
    with httpx.Client(base_url=f"{server.url}/agentmemory", timeout=30) as client:
        yield client


def _remember(rest, summary: str, **extra) -> httpx.Response:
    return rest.post(
        "/remember",
        json={"project": "rest-sup", "summary": summary, "facts": [summary], **extra},
    )


def test_remember_and_edit_take_supersedes(rest, vault):
    older = _remember(rest, "Builds run on Jenkins agents.").json()["memory"]["id"]
    refused = _remember(rest, "Builds run on GitHub Actions runners.", supersedes="no/such")
    assert refused.status_code == 400, refused.text
    assert refused.json()["fields"] == ["supersedes"]
    assert not list((vault / "agent-memory").glob("*GitHub*"))

    written = _remember(rest, "Builds run on GitHub Actions runners.", supersedes=older)
    assert written.status_code == 201, written.text
    newer = written.json()["memory"]["id"]
    assert written.json()["supersedes"] == older
    fragment = Fragment.read(vault / "agent-memory" / f"{older}.md")
    assert fragment.properties["superseded_by"] == newer
    assert fragment.summary.startswith("[superseded]")

    third = _remember(rest, "Release notes are written in CHANGELOG.md.").json()["memory"]["id"]
    patched = rest.patch(f"/fragments/{newer}", json={"supersedes": third})
    assert patched.status_code == 200, patched.text
    assert (
        Fragment.read(vault / "agent-memory" / f"{third}.md").properties["superseded_by"] == newer
    )
    found = rest.post("/search", json={"query": "release notes changelog", "project": "rest-sup"})
    summaries = [r.get("summary", "") for r in found.json()["results"]]
    assert any(s.startswith("[superseded]") for s in summaries), found.json()
