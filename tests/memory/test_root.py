"""Memory, the Python API: what the REST API, MCP server and CLI call."""

from __future__ import annotations

import pytest

from memvault import Memory
from memvault.errors import InvalidInput, MemvaultError, StoreFailure
from tests.helpers import envelope


def test_observe_records_event_observation_and_session(memory):
    result = memory.observe(envelope(n=1))
    assert not result.deduplicated and result.observation_id.startswith("obs_")
    (observation,) = memory.reads.observations("s1")
    assert observation.id == result.observation_id
    assert memory.reads.session("s1").observation_count == 1


def test_invalid_input_writes_nothing(memory):
    with pytest.raises(InvalidInput, match="sessionId: required"):
        memory.observe({"hookType": "stop", "project": "p", "cwd": "/", "timestamp": "t"})
    assert memory.health.report().store.events == 0
    assert memory.reads.sessions() == []


def test_observe_many_keeps_order_and_isolates_bad_items(memory):
    bad = envelope(n=2)
    del bad["cwd"]
    result = memory.observe_many([envelope(n=1), bad, envelope(n=3), envelope(n=1)])
    assert (result.total, result.imported, result.deduplicated, result.failed) == (4, 2, 1, 1)
    assert result.errors[0].index == 1 and result.errors[0].event_id == "s1-e2"
    assert "observations[1].cwd: required" in result.errors[0].error
    assert result.results[1] is None
    assert result.results[3].event_seq == result.results[0].event_seq


def test_observe_many_handles_more_than_one_chunk(memory):
    result = memory.observe_many(envelope(n=i, eventId=f"e{i}") for i in range(2500))
    assert result.imported == 2500 and len(result.results) == 2500
    seqs = [r.event_seq for r in result.results]
    assert seqs == sorted(seqs)


def test_a_restarted_memory_still_knows_every_event_id(tmp_path):
    with Memory.open(home=tmp_path) as memory:
        first = memory.observe(envelope(n=4))
    with Memory.open(home=tmp_path) as memory:
        again = memory.observe(envelope(n=4))
    assert again.deduplicated and again.observation_id == first.observation_id


def test_health_reports_store_queue_and_process(memory):
    memory.observe(envelope())
    health = memory.health.report()
    assert health.status == "ok"
    assert (health.store.events, health.store.sessions) == (1, 1)
    assert health.pending_writes == 0
    assert health.rss_bytes and health.rss_bytes > 10 * 2**20


def test_a_timestamp_that_cannot_be_read_falls_back_to_arrival_time(memory):
    memory.observe(envelope(timestamp="not a time"))
    (event,) = memory.reads.events("s1")
    assert event.client_timestamp == "not a time"
    assert event.occurred_at == event.received_at


def test_epoch_timestamps_are_understood(memory):
    memory.observe(envelope(timestamp="1764496800000"))
    assert memory.reads.events("s1")[0].occurred_at == "2025-11-30T10:00:00.000Z"


def test_secrets_are_gone_before_anything_is_stored(tmp_path):
    secret = "sk-proj-" + "Z" * 40
    with Memory.open(home=tmp_path) as memory:
        memory.observe(
            envelope(
                data={"prompt": f"use {secret} and <private>my diary</private> please"},
                hookType="prompt_submit",
            )
        )
        stored = memory.reads.events("s1")[0].payload["prompt"]
        assert stored == "use [REDACTED:openai_key] and [REDACTED:private] please"
        assert secret not in memory.reads.observations("s1")[0].title
    for file in tmp_path.glob("memvault.db*"):
        content = file.read_bytes()
        assert secret.encode() not in content and b"my diary" not in content


def test_settings_come_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMVAULT_HOME", str(tmp_path / "envhome"))
    with Memory.open() as memory:
        assert memory.settings.store_path == tmp_path / "envhome" / "memvault.db"
        assert memory.settings.vault_path == tmp_path / "envhome" / "vault"


def test_a_store_that_can_no_longer_write_says_so(memory, monkeypatch):
    def broken(conn, batch):
        raise RuntimeError("disk gone")

    monkeypatch.setattr(memory.store._writer, "_commit", broken)
    with pytest.raises(StoreFailure, match="disk gone"):
        memory.observe(envelope())
    assert memory.health.report().status == "critical"
    with pytest.raises(StoreFailure):
        memory.observe(envelope(n=2))


def test_a_vault_that_does_not_exist_is_refused_by_name(tmp_path):
    with pytest.raises(MemvaultError, match=r"MEMVAULT_VAULT is .*missing.*not a folder"):
        Memory.open(home=tmp_path / "home", vault=tmp_path / "missing")
    assert not (tmp_path / "missing").exists()


def test_an_existing_vault_is_used_instead_of_the_default(tmp_path):
    (tmp_path / "Obsidian").mkdir()
    with Memory.open(home=tmp_path / "home", vault=tmp_path / "Obsidian") as memory:
        report = memory.board.register_session(agent="cursor-main-agent")
        assert report.ok
    assert (tmp_path / "Obsidian" / "memory" / "index.md").exists()
    assert not (tmp_path / "home" / "vault").exists()


def test_a_timestamp_out_of_range_is_kept_as_sent_and_dated_by_arrival(memory):
    memory.observe(envelope(timestamp="0001-01-01T00:00:00+01:00"))
    (event,) = memory.reads.events("s1")
    assert event.client_timestamp == "0001-01-01T00:00:00+01:00"
    assert event.occurred_at == event.received_at


def test_an_unstorable_item_fails_alone_in_a_bulk(memory):
    bad = envelope(n=2, data={"text": "\ud800"})
    result = memory.observe_many([envelope(n=1), bad, envelope(n=3)])
    assert (result.imported, result.failed) == (2, 1)
    assert result.errors[0].index == 1
    assert [e.client_event_id for e in memory.reads.events("s1")] == ["s1-e1", "s1-e3"]


def test_health_counts_come_from_counters_kept_by_the_writer(memory):
    memory.observe_many(envelope(session=f"s{i % 3}", n=i) for i in range(30))
    memory.context.start_session({"sessionId": "empty", "project": "p", "cwd": "/p"})
    memory.context.start_session({"sessionId": "empty", "project": "p", "cwd": "/p"})
    stats = memory.health.report().store
    assert (stats.events, stats.observations, stats.sessions) == (30, 30, 4)
