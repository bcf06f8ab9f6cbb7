"""One vault folder shared by replicas on one PostgreSQL database: exactly one replica (the
owner) writes it; the others hand their board and fragment writes over through the
database and tell their clients the owner's answer; a standby takes over when the owner
is killed, and then picks up hand edits."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import jsonschema
import psycopg
import pytest

from memvault import Memory
from memvault.errors import InvalidInput
from memvault.vault.edit import Edit
from memvault.vault.owner import VaultWriteQueued
from memvault.vault.remember import Draft
from tests.e2e.test_health_visibility import memvault
from tests.helpers import envelope, wait_for
from tests.replicas.conftest import found, replica

OFFLINE = {"embeddings": "none", "llm": "none"}


def open_replica(root: Path, name: str, database: str, vault: Path) -> Memory:
    """A Memory of its own home on the shared database and vault folder."""
    return Memory.open(home=root / name, vault=vault, store_location=database, **OFFLINE)


@pytest.fixture
def shared(postgres_cluster, tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    return postgres_cluster.database(), vault


def post_event(server, session: str, n: int, command: str) -> None:
    data = {"tool_name": "Bash", "tool_input": {"command": command}, "tool_output": ""}
    answer = httpx.post(
        f"{server.url}/agentmemory/observe", json=envelope(session, n, data=data), timeout=30
    )
    assert answer.status_code == 201, answer.text


# Every route that writes the vault: on a standby each may answer 202.
VAULT_WRITES = [
    *(
        (f"/agentmemory/board/{name}", "post")
        for name in ("register", "continue", "release", "organize")
    ),
    ("/agentmemory/board/sessions/{session_id}/update", "post"),
    ("/agentmemory/board/sessions/{session_id}/archive", "post"),
    ("/agentmemory/remember", "post"),
    ("/agentmemory/forget", "post"),
    ("/agentmemory/fragments/{fragment_id}", "patch"),
    ("/agentmemory/fragments/{fragment_id}", "delete"),
    ("/agentmemory/maintain", "post"),
]


def board_text(vault: Path) -> str:
    index = vault / "memory" / "index.md"
    return index.read_text(encoding="utf-8") if index.exists() else ""


def test_the_first_memory_owns_the_vault_and_the_second_hands_its_writes_to_it(shared, tmp_path):
    database, vault = shared
    with (
        open_replica(tmp_path, "a", database, vault) as owner,
        open_replica(tmp_path, "b", database, vault) as standby,
    ):
        assert owner.owner.claim.is_owner() is True
        assert standby.owner.claim.is_owner() is False
        owner.owner.claim.start()  # the owner's loop applies what the standby queues

        report = standby.board.register_session(
            manual=True, topic="Owner test", content="## Goal\n- x"
        )
        assert report.ok, report.message
        assert report.session_id and f"| {report.session_id} |" in board_text(vault)
        assert "Owner test" in board_text(vault)

        saved = standby.remember(
            Draft(project="replicas", summary="The standby's fragment.", facts=["one fact"])
        )
        assert saved.action == "created" and saved.path.is_file()
        assert saved.path.is_relative_to(vault)
        # Saved again from the standby: merged into the same file, as on the owner.
        again = standby.remember(
            Draft(project="replicas", summary="The standby's fragment.", facts=["one fact"])
        )
        assert again.action == "merged" and again.path == saved.path

        # The owner's errors are the standby's errors, with their fields.
        with pytest.raises(InvalidInput) as refused:
            standby.remember(Draft(project="", summary="", facts=[]))
        assert "project" in str(refused.value)
        missing = standby.board.update_session("1999-01-01-no-such-row", "## Goal\n- y")
        assert missing.ok is False and missing.message

        assert standby.health.report().vault_owner is False
        assert owner.health.report().vault_owner is True
        assert standby.health.report().vault_writes_queued == 0


def test_a_write_queued_while_no_owner_applies_it_is_applied_in_order_by_the_next(shared, tmp_path):
    database, vault = shared
    owner = open_replica(tmp_path, "a", database, vault)
    standby = open_replica(tmp_path, "b", database, vault)
    try:
        assert owner.owner.claim.is_owner() and not standby.owner.claim.is_owner()
        # The owner runs no loop here, so the writes wait in the database; the standby
        # tells its caller so after a short wait.
        standby.owner.claim.wait = 0.3
        with pytest.raises(VaultWriteQueued) as queued:
            standby.board.register_session(topic="Queued first")
        assert queued.value.write_id > 0
        with pytest.raises(VaultWriteQueued):
            standby.board.register_session(topic="Queued second")
        assert standby.health.report().vault_writes_queued == 2
        assert "Queued first" not in board_text(vault)

        owner.close()  # the owner goes away; the standby takes the vault and the queue
        # Its lock goes with its connection, which the server may take a moment to drop.
        wait_for(standby.owner.claim.check, timeout=10)
        assert standby.owner.claim.apply_due() == 2
        text = board_text(vault)
        assert text.index("Queued first") < text.index("Queued second")
        assert standby.health.report().vault_writes_queued == 0
    finally:
        owner.close()
        standby.close()


def test_a_write_the_owner_cannot_run_is_answered_and_the_writes_behind_it_are_applied(
    shared, tmp_path
):
    """A replica of a newer version asks with a keyword the owner does not take: the owner
    answers it with an error naming it, and the writes queued after it are applied."""
    database, vault = shared
    owner = open_replica(tmp_path, "a", database, vault)
    standby = open_replica(tmp_path, "b", database, vault)
    try:
        assert owner.owner.claim.is_owner()
        newer = {"args": [], "kwargs": {"topic": "From a newer replica", "lived": "2026-10-01"}}
        first = standby.store.queue_vault_write("newer", "register_session", newer)
        standby.owner.claim.wait = 0.3
        with pytest.raises(VaultWriteQueued):
            standby.board.register_session(topic="Queued behind it")
        assert owner.owner.claim.apply_due() == 2
        answer = standby.store.vault_write(first).result
        assert answer["error"] == "error" and "lived" in answer["message"]
        text = board_text(vault)
        assert "Queued behind it" in text and "From a newer replica" not in text
        assert standby.health.report().vault_writes_queued == 0
    finally:
        owner.close()
        standby.close()


def test_a_write_the_database_fails_for_a_moment_stays_queued_and_is_applied_later(
    shared, tmp_path
):
    """A transaction aborted, a connection lost, a database read-only while it fails over:
    the write is applied at a later round, not answered with the failure."""
    database, vault = shared
    owner = open_replica(tmp_path, "a", database, vault)
    standby = open_replica(tmp_path, "b", database, vault)
    failures = [psycopg.errors.SerializationFailure("could not serialize access")]

    def flaky(topic: str) -> str:
        if failures:
            raise failures.pop()
        return owner.board.register_session(topic=topic).session_id

    try:
        assert owner.owner.claim.is_owner()
        owner.owner.route({"flaky": flaky})
        queued = standby.store.queue_vault_write(
            "flaky", "flaky", {"args": ["Flaky"], "kwargs": {}}
        )
        with pytest.raises(psycopg.errors.SerializationFailure):
            owner.owner.claim.apply_due()
        assert standby.store.vault_write(queued).done is False
        assert owner.owner.claim.apply_due() == 1
        assert "value" in standby.store.vault_write(queued).result
        assert "Flaky" in board_text(vault)
        # What the data gets wrong fails the same way every time: answered, not retried.
        assert not owner.store.transient(psycopg.errors.UniqueViolation("duplicate key"))
        assert not owner.store.transient(ValueError("no"))
    finally:
        owner.close()
        standby.close()


# -- real servers --------------------------------------------------------------------------


def health(server) -> dict:
    return httpx.get(f"{server.url}/agentmemory/health", timeout=10).json()


def mirrored_topics(database: str) -> dict[str, str]:
    with psycopg.connect(database) as conn:
        rows = conn.execute("SELECT session_id, topic FROM board_rows").fetchall()
    return dict(rows)


@pytest.mark.slow
def test_two_servers_share_a_vault_and_the_standby_takes_over_when_the_owner_is_killed(
    shared, tmp_path
):
    database, vault = shared
    env = {
        "MEMVAULT_VAULT": str(vault),
        "MEMVAULT_EMBEDDINGS": "none",
        "MEMVAULT_LLM": "none",
        "MEMVAULT_POSTGRES_POOL_SIZE": "3",
    }
    first = replica(tmp_path / "a", database, env).start()
    second = None
    try:
        wait_for(lambda: health(first)["replication"]["vaultOwner"], timeout=10)
        second = replica(tmp_path / "b", database, env).start()
        told = health(second)
        assert told["replication"]["vaultOwner"] is False
        assert told["replication"]["role"] == "standby"
        assert told["store"]["engine"] == "postgres"
        pool = told["store"]["pool"]
        assert pool["size"] >= 1 and pool["max"] == 3 and pool["waiting"] >= 0
        assert health(first)["replication"]["role"] == "vault owner"
        status = memvault("status", url=second.url)
        assert status.returncode == 0, status.stderr
        words = " ".join(status.stdout.replace("│", " ").split())
        assert "vault role standby: another replica writes the vault" in words, words
        assert "connections" in words and "waiting" in words
        page = httpx.get(f"{second.url}/health", timeout=10).text
        assert '<td id="vault-role">standby: another replica writes the vault' in page
        assert "<th>Connections</th>" in page

        # A board write sent to the standby: the owner writes it, the client is told its
        # answer, and both replicas read the row.
        answer = httpx.post(
            f"{second.url}/agentmemory/board/register",
            json={"agentName": "cursor-main-agent", "manual": True, "topic": "Shared vault"},
            timeout=30,
        )
        assert answer.status_code == 200, answer.text
        row = answer.json()["sessionId"]
        assert f"| {row} |" in board_text(vault)
        for server in (first, second):
            rows = httpx.get(f"{server.url}/agentmemory/board/sessions", timeout=10).json()
            assert row in [r["sessionId"] for r in rows["sessions"]]
        saved = httpx.post(
            f"{second.url}/agentmemory/remember",
            json={"project": "replicas", "summary": "Saved on the standby.", "facts": ["f"]},
            timeout=30,
        )
        assert saved.status_code == 201, saved.text
        assert (vault / saved.json()["path"]).is_file()

        # Only the owner indexes the shared log; an event posted to the standby alone is
        # found on it within seconds all the same (the owner looks at the log every second).
        assert health(first)["index"]["indexer"] is True
        assert health(second)["index"]["indexer"] is False
        post_event(second, "on-standby", 1, "quokkaword deploy")
        wait_for(lambda: found(second, "quokkaword", "on-standby-e1"), timeout=10)
        time.sleep(1.5)  # the first event's board row written and seen by the owner
        posted_at = time.monotonic()
        post_event(second, "on-standby", 2, "numbatword deploy")
        wait_for(lambda: found(second, "numbatword", "on-standby-e2"), timeout=10)
        assert time.monotonic() - posted_at < 5

        # The owner dies without a word; the standby takes the vault within seconds.
        first.kill()
        killed_at = time.monotonic()
        wait_for(lambda: health(second)["replication"]["vaultOwner"], timeout=15)
        took = time.monotonic() - killed_at
        assert took < 10, took
        # And indexes from then on.
        assert health(second)["index"]["indexer"] is True
        post_event(second, "on-standby", 3, "wombatword rollback")
        wait_for(lambda: found(second, "wombatword", "on-standby-e3"), timeout=10)
        # Its board watcher now picks up a hand edit of the board.
        index = vault / "memory" / "index.md"
        index.write_text(
            index.read_text(encoding="utf-8").replace("Shared vault", "Edited by hand"),
            encoding="utf-8",
        )
        wait_for(lambda: mirrored_topics(database).get(row) == "Edited by hand", timeout=10)
        # And it writes the vault itself now.
        after = httpx.post(
            f"{second.url}/agentmemory/board/register",
            json={"agentName": "cursor-main-agent", "topic": "After the takeover"},
            timeout=30,
        )
        assert after.status_code == 200, after.text
        assert "After the takeover" in board_text(vault)
        assert health(second)["replication"]["vaultWritesQueued"] == 0
    finally:
        first.kill()
        if second is not None:
            second.kill()


def test_a_replica_whose_folder_is_not_the_vault_never_takes_it_over(shared, tmp_path):
    database, vault = shared
    elsewhere = tmp_path / "own-folder"
    elsewhere.mkdir()
    owner = open_replica(tmp_path, "a", database, vault)
    standby = open_replica(tmp_path, "b", database, elsewhere)
    try:
        assert owner.owner.claim.is_owner()
        saved = owner.remember(Draft(project="p", summary="Kept in the vault.", facts=["f"]))
        assert owner.store.fragment_counts()[0] == 1
        identity = (vault / "memory" / ".vault-id").read_text().strip()
        owner.close()  # the lock is free, but the standby's folder is not the vault

        assert standby.owner.claim.check() is False
        told = standby.health.report()
        assert told.vault_owner is False and told.status == "degraded"
        assert any(identity in reason for reason in told.reasons), told.reasons
        assert standby.index.indexer.scan_vault() == 0  # nothing dropped for an empty folder
        assert standby.store.fragment_counts()[0] == 1
        assert not (elsewhere / "memory" / "index.md").exists()
        assert saved.path.is_file()
    finally:
        owner.close()
        standby.close()

    # Told that this folder is the vault now, a replica takes it.
    assert not (elsewhere / "memory").exists()  # the refused replica wrote nothing there
    (elsewhere / "memory").mkdir()
    (elsewhere / "memory" / ".vault-id").write_text(identity + "\n")
    with open_replica(tmp_path, "c", database, elsewhere) as moved:
        assert moved.owner.claim.is_owner() is True
        assert moved.health.report().vault_owner is True


@pytest.mark.slow
def test_a_write_no_owner_applies_in_time_is_answered_accepted_and_applied_later(shared, tmp_path):
    database, vault = shared
    env = {"MEMVAULT_VAULT": str(vault), "MEMVAULT_EMBEDDINGS": "none", "MEMVAULT_LLM": "none"}
    # The owner holds the vault but applies nothing until told (its loop is not running).
    with open_replica(tmp_path, "owner", database, vault) as owner:
        assert owner.owner.claim.is_owner()
        standby = replica(tmp_path / "standby", database, env).start()
        try:
            answer = httpx.post(
                f"{standby.url}/agentmemory/board/register",
                json={"agentName": "cursor-main-agent", "topic": "Accepted for later"},
                timeout=30,
            )
            assert answer.status_code == 202, answer.text
            told = answer.json()
            assert told["accepted"] is True and told["queued"] > 0
            # The answer is the one the OpenAPI document declares for it.
            document = httpx.get(f"{standby.url}/openapi.json", timeout=10).json()
            declared = document["paths"]["/agentmemory/board/register"]["post"]["responses"]
            schema = declared["202"]["content"]["application/json"]["schema"]
            name = schema["$ref"].rsplit("/", 1)[1]
            jsonschema.validate(told, {**schema, "components": document["components"]})
            assert name == "VaultWriteAccepted"
            for path, method in VAULT_WRITES:
                assert "202" in document["paths"][path][method]["responses"], (path, method)
            assert "Accepted for later" not in board_text(vault)
            assert health(standby)["replication"]["vaultWritesQueued"] == 1
        finally:
            standby.kill()
        assert owner.owner.claim.apply_due() == 1
        assert "Accepted for later" in board_text(vault)


def test_a_fragment_edited_through_a_standby_is_not_counted_as_read(shared, tmp_path):
    database, vault = shared
    with (
        open_replica(tmp_path, "a", database, vault) as owner,
        open_replica(tmp_path, "b", database, vault) as standby,
    ):
        saved = owner.remember(Draft(project="replicas", summary="Reads.", facts=["a fact"]))
        owner.index.index_now()
        key = f"agent-memory/{saved.path.name}"
        # The standby waits for the owner's answer; the owner applies the queue here.
        with ThreadPoolExecutor(1) as pool:
            edited = pool.submit(
                standby.fragments.edit_fragment, saved.path.stem, Edit(add_facts=["another fact"])
            )
            wait_for(lambda: owner.owner.claim.apply_due() > 0 or edited.done(), timeout=30)
            entry = edited.result(timeout=30)
        assert "another fact" in entry.body
        owner.store.sync()
        standby.store.sync()
        # Editing is not reading: what keeps a fragment from being archived is agents' reads.
        assert owner.store.document("fragment", key).access_count == 0


def test_a_standby_hands_a_sessions_board_registration_over_once(shared, tmp_path):
    """Events of one host session arriving at a standby register it on the board once:
    the standby remembers the owner's answer, and a session another replica linked needs
    no hand-over at all (each hand-over is a round trip through the owner)."""
    database, vault = shared
    with (
        open_replica(tmp_path, "a", database, vault) as owner,
        open_replica(tmp_path, "b", database, vault) as standby,
    ):
        owner.owner.claim.start()
        for n in range(5):
            standby.observe(envelope("host-s", n))
            if standby.board.needs_board_row("host-s"):
                standby.board.register_from_event("host-s", None)
        owner.observe(envelope("host-o", 0))
        assert owner.board.needs_board_row("host-o")
        owner.board.register_from_event("host-o", None)
        for n in range(1, 4):
            standby.observe(envelope("host-o", n))
            if standby.board.needs_board_row("host-o"):
                standby.board.register_from_event("host-o", None)
        linked = {s: standby.reads.session(s).board_session_id for s in ("host-s", "host-o")}
        assert all(linked.values()), linked
        with psycopg.connect(database) as conn:
            kinds = conn.execute(
                "SELECT kind, count(*) FROM vault_writes WHERE kind <> 'identity' GROUP BY kind"
            ).fetchall()
        assert kinds == [("register_host_session", 1)]
