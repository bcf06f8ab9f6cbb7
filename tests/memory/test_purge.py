"""Purge: a text replaced everywhere memvault keeps it, read back from the raw bytes of the
database files (WAL included), the vault and the home folder; on PostgreSQL from every
text column, the postings and the cluster's table files."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from memvault import Memory
from memvault.errors import InvalidInput
from memvault.memory.purge import pattern_of
from memvault.store.contract.purge import MARKER, scrub
from tests.helpers import IN_CI, wait_for

SECRET = "Zq9LeakedTokenX7"  # one word: the index keeps it as one term (lower-cased)
WHEN = "2026-12-01T10:00:00.000Z"


def envelope(session: str, n: int, data: dict) -> dict:
    return {
        "hookType": "post_tool_use" if "tool_name" in data else "prompt_submit",
        "sessionId": session,
        "project": "demo-app",
        "cwd": "/home/me/code/demo-app",
        "timestamp": f"2026-12-01T10:00:0{n}.000Z",
        "agentId": "claude-code",
        "eventId": f"{session}-{n}",
        "data": data,
    }


EVENTS = [
    {"prompt": f"deploy with the token {SECRET} and check the gateway"},
    {
        "tool_name": "Bash",
        "tool_input": {"command": f'curl -H "X-Token: {SECRET}" https://gw.local'},
        "tool_output": f'{{"echo": "{SECRET}"}}\n"quoted" line\tand {SECRET.lower()}',
    },
    {"prompt": "rotate the gateway credentials tomorrow"},
]


def occurrences(root: Path) -> list[str]:
    """Every file under ``root`` whose bytes hold the secret, in any case."""
    needle = SECRET.lower().encode()
    return [
        str(p) for p in sorted(root.rglob("*")) if p.is_file() and needle in p.read_bytes().lower()
    ]


def test_a_purge_leaves_no_byte_of_the_text_in_the_database_vault_or_home(start_server):
    server = start_server({"MEMVAULT_EMBEDDINGS": "none"})
    api = f"{server.url}/agentmemory"
    for n, data in enumerate(EVENTS):
        assert httpx.post(f"{api}/observe", json=envelope("s-purge", n, data)).status_code == 201
    remembered = httpx.post(
        f"{api}/remember",
        json={"content": f"The gateway token is {SECRET}; rotate it monthly.", "project": "demo"},
    )
    assert remembered.status_code == 201, remembered.text
    registered = httpx.post(
        f"{api}/board/register",
        json={
            "agentName": "claude-code-main-agent",
            "manual": True,
            "topic": "Gateway deploy",
            "summary": f"deployed with {SECRET}",
            "sections": {"Current Context": f"The token {SECRET} works on the gateway."},
        },
    )
    assert registered.status_code == 200, registered.text
    spool = server.home / "spool"
    spool.mkdir(exist_ok=True)
    (spool / "bad").mkdir(exist_ok=True)  # set aside, never drained: only a purge reaches it
    (spool / "bad" / "0001-broken.json").write_text(f'{{"data": "{SECRET}", broken')
    assert httpx.post(f"{api}/reindex", timeout=60).status_code == 200
    assert occurrences(server.home)  # the text is there to begin with

    dry = httpx.post(f"{api}/purge", json={"text": SECRET, "dryRun": True}, timeout=60).json()
    env = {**os.environ, "MEMVAULT_HOME": str(server.home), "MEMVAULT_URL": server.url}
    env["COLUMNS"] = "200"  # one line per row of the status table
    cli = subprocess.run(
        [sys.executable, "-m", "memvault.cli", "purge", SECRET, "--dry-run", "--json"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["matches"] == dry["matches"]  # the CLI asked the server
    assert "home:spool/bad/0001-broken.json" in {p["where"] for p in dry["places"]}
    places = {p["where"] for p in dry["places"]}
    assert {"events.payload", "observations.narrative", "documents.body"} <= places
    assert any(w.startswith("vault:memory/sessions/") for w in places)
    assert any(w.startswith("vault:agent-memory/") for w in places)
    assert "vault:memory/index.md" in places
    assert dry["dryRun"] is True and dry["purgedAt"] is None and dry["matches"] >= 10
    assert occurrences(server.home)  # a dry run changes nothing

    done = httpx.post(f"{api}/purge", json={"text": SECRET}, timeout=120).json()
    assert done["matches"] == dry["matches"] and done["purgedAt"]
    assert occurrences(server.home) == []  # memvault.db, -wal, -shm, the vault, the spool

    again = httpx.post(f"{api}/purge", json={"text": SECRET, "dryRun": True}).json()
    assert again["places"] == []
    health = httpx.get(f"{api}/health").json()["privacy"]
    assert health["purges"] == 1
    assert health["lastPurge"]["matches"] == done["matches"]
    assert SECRET.lower() not in json.dumps(health).lower()
    status = subprocess.run(
        [sys.executable, "-m", "memvault.cli", "status"], env=env, capture_output=True, text=True
    )
    assert "purges" in status.stdout and "1; the latest at" in status.stdout
    page = httpx.get(f"{server.url}/health").text  # the viewer's health page
    assert "the latest at" in page and SECRET.lower() not in page.lower()
    events = httpx.get(f"{api}/observations", params={"sessionId": "s-purge"}).json()
    assert MARKER in json.dumps(events)

    # The index writes the purged documents again: what is left is found, the text is not.
    httpx.post(f"{api}/reindex", timeout=60)
    hits = httpx.post(f"{api}/search", json={"query": "gateway token rotate"}).json()
    assert hits["results"]
    assert SECRET.lower() not in json.dumps(hits).lower()
    assert occurrences(server.home) == []

    with sqlite3.connect(server.home / "memvault.db") as conn, pytest.raises(sqlite3.Error):
        conn.execute("UPDATE events SET payload = '{}'")  # the log's guard is back


def test_the_cli_purges_in_process_with_a_regex_and_reports_a_dry_run(tmp_path):
    home = tmp_path / "home"
    with Memory.open(home=home, embeddings="none") as memory:
        for n, data in enumerate(EVENTS):
            memory.observe(envelope("s-cli", n, data))
    env = {"MEMVAULT_HOME": str(home), "MEMVAULT_URL": "http://127.0.0.1:9", "COLUMNS": "200"}
    run = [sys.executable, "-m", "memvault.cli", "purge", r"zq9\w+x7", "--regex"]
    dry = subprocess.run([*run, "--dry-run"], env=env, capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr
    assert "events.payload" in dry.stdout and "would replace" in dry.stdout
    done = subprocess.run([*run, "--json"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["purgedAt"]
    assert occurrences(home) == []


@pytest.mark.parametrize(
    ("text", "regex", "problem"),
    [
        ("", False, "empty"),
        ("abc", False, "shorter than 4"),
        ("a(b", True, "not a regular expression"),
        (".*", True, "matches empty or blank"),
        ("redacted", False, "matches the marker"),
        ("purg\\w+", True, "matches the marker"),
    ],
)
def test_a_text_that_would_match_everything_or_nothing_is_refused(text, regex, problem):
    with pytest.raises(InvalidInput, match=problem):
        pattern_of(text, regex=regex)


def test_json_text_is_rewritten_inside_its_strings_and_stays_json():
    pattern = pattern_of('a"b\\c')
    value = json.dumps({"k": 'x a"b\\c y', 'a"b\\c': [1, 'a"b\\c']})
    cleaned, count = scrub(value, pattern)
    assert count == 3
    assert json.loads(cleaned) == {"k": f"x {MARKER} y", MARKER: [1, MARKER]}


@pytest.fixture
def postgres_url(request):
    if not IN_CI:
        pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")
    cluster = request.getfixturevalue("postgres_cluster")
    return cluster, cluster.database()


def test_a_purge_on_postgresql_leaves_the_text_in_no_column_posting_or_table_file(
    postgres_url, tmp_path
):
    import psycopg

    cluster, url = postgres_url
    with Memory.open(home=tmp_path / "home", store_location=url, embeddings="none") as memory:
        for n, data in enumerate(EVENTS):
            memory.observe(envelope("s-pg", n, data))
        memory.index.index_now(vectors=False)
        dry = memory.purge.purge(SECRET, dry_run=True)
        assert {"events.payload", "documents.lexical terms"} <= {p.where for p in dry.places}
        report = memory.purge.purge(SECRET)
        assert report.record is not None and report.matches == dry.matches
        with psycopg.connect(url, autocommit=True) as conn:
            assert _postgres_holders(conn) == []
            with pytest.raises(psycopg.errors.RaiseException):
                conn.execute("UPDATE events SET payload = '{}'")
            conn.execute("CHECKPOINT")
            (folder,) = conn.execute(
                "SELECT oid FROM pg_database WHERE datname = current_database()"
            ).fetchone()
        assert occurrences(cluster.data / "base" / str(folder)) == []
        memory.index.index_now(vectors=False)
        wait_for(lambda: memory.search("gateway credentials"), timeout=10)
        assert memory.purge.audit().count == 1


def _postgres_holders(conn) -> list[str]:
    """Every ``table.column`` of text holding the secret (any case)."""
    columns = conn.execute(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND data_type IN ('text', 'character varying')"
    ).fetchall()
    found = []
    for table, column in columns:
        (count,) = conn.execute(
            f'SELECT count(*) FROM "{table}" WHERE "{column}" ILIKE %s', (f"%{SECRET}%",)
        ).fetchone()
        if count:
            found.append(f"{table}.{column}")
    return found


def test_a_document_sharing_only_a_stem_with_the_text_is_found_again_after_a_purge(tmp_path):
    """The index holds stems: purging "deployments" drops the lexical rows of a fragment
    that says "deployment", which the index must then write again."""
    from memvault.vault.remember import Draft

    with Memory.open(home=tmp_path / "home", embeddings="none") as memory:
        memory.remember(
            Draft(
                project="ops",
                summary="The deployment checklist lives in ops/",
                facts=["where: ops/checklist.md"],
            )
        )
        memory.observe(envelope("s-stem", 0, {"prompt": "list the deployments of friday"}))
        memory.index.index_now(vectors=False)
        report = memory.purge.purge("deployments")
        assert "documents.lexical terms" in {p.where for p in report.places}
        memory.index.index_now(vectors=False)
        hits = memory.search("deployment checklist", kinds=["fragment"])
        assert [h for h in hits if "checklist" in h.document.summary and h.lexical]


def test_the_vectors_of_purged_documents_are_embedded_again_from_what_is_left(tmp_path):
    from tests.embeddings.conftest import require_packaged_model

    require_packaged_model()
    with Memory.open(home=tmp_path / "home", embeddings="local") as memory:
        for n, data in enumerate(EVENTS):
            memory.observe(envelope("s-vectors", n, data))
        memory.index.index_now()
        assert memory.index.backlog().documents_not_embedded == 0
        memory.purge.purge(SECRET)
        assert memory.index.backlog().documents_not_embedded >= 2  # they lost their vectors
        memory.index.index_now()
        assert memory.index.backlog().documents_not_embedded == 0
        hits = memory.search("deploy with the token and check the gateway")
        assert any(h.semantic is not None for h in hits)  # found by meaning too
        assert all(SECRET.lower() not in h.document.body.lower() for h in hits)
    assert occurrences(tmp_path / "home") == []


def test_a_purge_leaves_the_stores_own_columns_alone(tmp_path):
    """A text that is also in times and kinds ("2026-12", "prompt") is purged from what was
    written, never from when or what kind: an event whose time no longer sorts would be
    lost to the index (it once answered 500 to the next request that indexed)."""
    with Memory.open(home=tmp_path / "home", embeddings="none") as memory:
        memory.observe_many([envelope("s-own", n, data) for n, data in enumerate(EVENTS)])
        memory.index.index_now(vectors=False)
        before = [(e.occurred_at, e.hook_type) for e in memory.store.list_events("s-own", limit=9)]
        memory.purge.purge("2026-12")
        memory.purge.purge("prompt_submit")
        memory.observe(envelope("s-own", 5, {"prompt": "one more step"}))
        memory.index.index_now(vectors=False)
        after = [(e.occurred_at, e.hook_type) for e in memory.store.list_events("s-own", limit=9)]
        assert after[: len(before)] == before
        assert memory.search("one more step", kinds=["observation"])
