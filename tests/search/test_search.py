"""Search over real store files and real vault files: what is indexed, found and ranked."""

from __future__ import annotations

import math
import os
import time

import pytest

from memvault import Memory
from memvault.errors import InvalidInput
from memvault.search.query import parse
from memvault.search.ranking import RELEVANCE_ONLY, Weights
from memvault.vault.remember import Draft


def prompt(memory: Memory, text: str, n: int, *, session: str = "s1", event_id=True, **extra):
    body = {
        "hookType": "prompt_submit",
        "sessionId": session,
        "project": extra.pop("project", "demo"),
        "cwd": "/code/demo",
        "timestamp": extra.pop("timestamp", f"2026-11-30T10:{n // 60:02d}:{n % 60:02d}.000Z"),
        "data": {"prompt": text},
    }
    if event_id:
        body["eventId"] = f"{session}-{n}"
    return memory.observe(body)


def ids(hits):
    return [hit.document.key for hit in hits]


@pytest.fixture
def vault_memory(tmp_path):
    with Memory.open(home=tmp_path / "home") as memory:
        yield memory


def test_observations_are_found_with_the_client_event_id_first(vault_memory):
    prompt(vault_memory, "Fix the flaky websocket reconnect in api/server.py", 1)
    prompt(vault_memory, "Bump the lockfile", 2)
    hits = vault_memory.search("websocket", kinds=["observation"])
    assert hits[0].document.event_ids == ["s1-1"]
    assert hits[0].document.kind == "observation"
    assert "websocket" in hits[0].document.summary


def test_events_without_a_client_id_are_named_by_their_server_sequence(vault_memory):
    result = prompt(vault_memory, "Rotate the signing keys", 1, event_id=False)
    hit = vault_memory.search("signing keys")[0]
    assert hit.document.event_ids == [f"evt_{result.event_seq}"]


def test_a_two_character_chinese_query_finds_its_text(vault_memory):
    prompt(vault_memory, "数据库连接池配置错误导致超时", 1)
    prompt(vault_memory, "前端样式调整", 2)
    assert ids(vault_memory.search("超时", kinds=["observation"]))[0] == "obs_1"
    assert ids(vault_memory.search("样式", kinds=["observation"]))[0] == "obs_2"


def test_a_japanese_query_finds_its_fragment(vault_memory):
    vault_memory.remember(
        Draft(
            project="demo",
            summary="メモリ不足の原因はキャッシュの肥大化",
            facts=["対策: 上限を設定"],
        )
    )
    vault_memory.remember(Draft(project="demo", summary="Deploys go through CI", facts=["ci: gha"]))
    hits = vault_memory.search("キャッシュ", kinds=["fragment"])
    assert len(hits) == 1 and "キャッシュ" in hits[0].document.summary


def test_a_phrase_must_appear_in_order_and_a_prefix_matches_word_starts(vault_memory):
    prompt(vault_memory, "the connection pool timed out", 1)
    prompt(vault_memory, "pool of workers lost its connection", 2)
    assert ids(vault_memory.search('"connection pool"', kinds=["observation"])) == ["obs_1"]
    prompt(vault_memory, "deployment finished", 3)
    assert "obs_3" in ids(vault_memory.search("deploy*", kinds=["observation"]))


def test_neighbouring_events_help_a_result_be_found_but_rank_below_the_text_itself(
    vault_memory,
):
    prompt(vault_memory, "Why does the staging database keep timing out?", 1)
    prompt(vault_memory, "Because the pool size is 5; raise it to 20.", 2)
    hits = vault_memory.search("staging database", kinds=["observation"])
    assert ids(hits)[:2] == ["obs_1", "obs_2"]
    assert hits[0].relevance > hits[1].relevance > 0


def test_every_result_shows_why_it_ranks_where_it_does(vault_memory):
    prompt(vault_memory, "Rotate the signing keys every 90 days", 1)
    hit = vault_memory.search("signing keys", weights=Weights())[0]
    assert 0 <= hit.relevance <= 1 and 0 <= hit.importance <= 1 and 0 <= hit.recency <= 1
    expected = 0.5 * hit.relevance + 0.3 * hit.importance + 0.2 * hit.recency
    assert hit.score == pytest.approx(expected)


def test_recency_decays_by_day_and_the_weights_are_configurable(tmp_path):
    with Memory.open(
        home=tmp_path / "h", weight_relevance=1, weight_importance=0, weight_recency=1
    ) as memory:
        prompt(memory, "cache eviction policy", 1, timestamp="2026-01-01T00:00:00Z")
        hit = memory.search("cache eviction", kinds=["observation"])[0]
    days = (time.time() - 1767225600) / 86400
    assert hit.recency == pytest.approx(math.exp(-0.01 * days), rel=1e-3)
    assert hit.score == pytest.approx((hit.relevance + hit.recency) / 2)


def test_importance_reorders_equally_relevant_fragments_unless_ranking_by_relevance(
    vault_memory,
):
    vault_memory.remember(
        Draft(
            project="a", summary="retry budget for the payment API", facts=["x: 1"], importance=0.1
        )
    )
    vault_memory.remember(
        Draft(
            project="b", summary="retry budget for the payment API", facts=["x: 1"], importance=0.9
        )
    )
    ranked = vault_memory.search("retry budget payment", kinds=["fragment"])
    assert [h.document.project for h in ranked] == ["b", "a"]
    assert ranked[0].score > ranked[1].score
    plain = vault_memory.search("retry budget payment", kinds=["fragment"], weights=RELEVANCE_ONLY)
    assert plain[0].score == pytest.approx(plain[0].relevance)


def test_project_and_kind_filters(vault_memory):
    prompt(vault_memory, "tune the cache", 1, project="alpha")
    prompt(vault_memory, "tune the cache", 2, project="beta", session="s2")
    vault_memory.remember(Draft(project="alpha", summary="cache size is 512MB", facts=["a: b"]))
    assert {h.document.project for h in vault_memory.search("cache", project="alpha")} == {"alpha"}
    kinds = {h.document.kind for h in vault_memory.search("cache", kinds=["fragment"])}
    assert kinds == {"fragment"}


def test_bad_search_arguments_are_named(vault_memory):
    with pytest.raises(InvalidInput, match="kinds"):
        vault_memory.search("x", kinds=["memos"])
    with pytest.raises(InvalidInput, match="limit"):
        vault_memory.search("x", limit=0)


def test_a_hand_edit_is_searchable_and_the_old_text_is_not(vault_memory):
    done = vault_memory.remember(
        Draft(
            project="demo",
            summary="the queue is RabbitMQ",
            facts=["broker: rabbitmq"],
            description="queue broker",
        )
    )
    assert vault_memory.search("rabbitmq")
    text = done.path.read_text().replace("RabbitMQ", "Kafka").replace("rabbitmq", "kafka")
    done.path.write_text(text)
    os.utime(done.path, (time.time() + 5, time.time() + 5))
    vault_memory.index.index_now(vectors=False)  # the server's watcher does this by itself
    assert vault_memory.search("kafka", kinds=["fragment"])
    assert not vault_memory.search("rabbitmq", kinds=["fragment"])


def test_a_deleted_fragment_file_leaves_the_index(vault_memory):
    done = vault_memory.remember(Draft(project="demo", summary="use pnpm", facts=["pm: pnpm"]))
    assert vault_memory.search("pnpm")
    done.path.unlink()
    vault_memory.index.index_now(vectors=False)
    assert not vault_memory.search("pnpm")


def test_archived_fragments_only_on_request(vault_memory):
    folder = vault_memory.settings.fragments_path
    done = vault_memory.remember(Draft(project="demo", summary="old flag foo", facts=["f: 1"]))
    (folder / "_archive").mkdir()
    done.path.rename(folder / "_archive" / done.path.name)
    vault_memory.index.index_now(vectors=False)
    assert not vault_memory.search("flag foo")
    hits = vault_memory.search("flag foo", include_archived=True)
    assert hits and hits[0].document.archived
    assert vault_memory.recall.public_id(hits[0].document).startswith("_archive/")


def test_session_summaries_from_the_board_are_searchable(vault_memory):
    report = vault_memory.board.register_session(
        agent="main-agent",
        manual=True,
        topic="Payment retries",
        summary="Idempotency keys on every charge",
        keywords="stripe, retries",
        content={"Decisions": ["added idempotency keys"]},
    )
    assert report.ok
    hits = vault_memory.search("idempotency", kinds=["summary"])
    assert [h.document.key for h in hits] == [report.session_id]
    assert hits[0].document.path == f"memory/sessions/{report.session_id}.md"


def _contexts(memory: Memory) -> dict[str, str]:
    import sqlite3

    with sqlite3.connect(memory.settings.store_path) as conn:
        return dict(
            conn.execute(
                "SELECT d.key, f.context FROM documents d JOIN documents_fts f ON f.rowid = d.id "
                "WHERE d.kind = 'observation'"
            )
        )


def test_context_is_the_same_however_events_arrive_and_are_batched(tmp_path):
    texts = [f"turn {n} about topic{n}" for n in range(12)]
    order = [0, 1, 2, 5, 3, 4, 6, 11, 7, 8, 9, 10]  # some arrive late
    with Memory.open(home=tmp_path / "a") as one_go, Memory.open(home=tmp_path / "b") as trickle:
        for n in range(12):
            prompt(one_go, texts[n], n)
        one_go.index.index_now(vectors=False)
        for n in order:
            prompt(trickle, texts[n], n)
            trickle.index.indexer.index_observations(batch=2)
        while trickle.index.indexer.index_observations(batch=2):
            pass
        by_event_a = {d.event_ids[0]: h for d, h in _docs(one_go)}
        by_event_b = {d.event_ids[0]: h for d, h in _docs(trickle)}
    assert by_event_a == by_event_b


def _docs(memory: Memory):
    contexts = _contexts(memory)
    for key in contexts:
        yield memory.store.document("observation", key), contexts[key]


def test_in_a_large_index_only_results_holding_a_rarer_term_are_scored(vault_memory, monkeypatch):
    from memvault.search import lexical

    # Counted among events (the part searched): zebra in 2, common in 3.
    monkeypatch.setattr(lexical, "RARE_DOCUMENTS", 2)
    monkeypatch.setattr(lexical, "RARE_SHARE", 0.0)
    texts = ["zebra common", "common stuff", "common things", "zebra", "stuff things"]
    for n, text in enumerate(texts):
        prompt(vault_memory, text, n, session=f"own-{n}")  # no neighbours: no context

    def found(query):
        vault_memory.index.searcher.counts.clear()
        return [h.document.event_ids[0] for h in vault_memory.search(query, kinds=["observation"])]

    # zebra is rare: only results holding it are scored (common alone is not enough).
    assert set(found("zebra common")) == {"own-0-0", "own-3-3"}
    monkeypatch.setattr(lexical, "RARE_DOCUMENTS", 1)  # now every term is common
    assert found("zebra common") == ["own-0-0"]  # the two rarest, together
    # ... or, when no result holds both, any of them.
    assert set(found("zebra stuff")) == {"own-0-0", "own-1-1", "own-3-3", "own-4-4"}


def test_a_query_of_common_words_searches_its_own_projects_newest(vault_memory, monkeypatch):
    """Every word common: the newest documents are searched, those of the project asked.
    A newer, busier project's documents do not push an older project's out of the window."""
    from memvault.search import lexical

    monkeypatch.setattr(lexical, "RARE_DOCUMENTS", 1)
    monkeypatch.setattr(lexical, "RARE_SHARE", 0.0)
    monkeypatch.setattr(lexical, "COMMON_WINDOW", 3)
    prompt(vault_memory, "the deploy pipeline broke", 0, session="old", project="shop")
    prompt(vault_memory, "notes on the deploy pipeline", 1, session="old", project="shop")
    for n in range(2, 8):
        prompt(vault_memory, f"deploy pipeline run {n}", n, session="busy", project="infra")

    def found(project):
        hits = vault_memory.search("deploy pipeline", kinds=["observation"], project=project)
        return {h.document.event_ids[0] for h in hits}

    assert found("shop") == {"old-0", "old-1"}
    newest = found("infra")  # its own newest documents: the session's among them
    assert newest and newest <= {"busy-5", "busy-6", "busy-7"}


def test_rare_words_the_project_does_not_hold_leave_its_common_words_asked(
    vault_memory, monkeypatch
):
    """A word rare in the index may be in none of the searched project's documents: the
    request is then asked by its common words, as a request of only common words is, and
    finds what the project holds instead of nothing."""
    from memvault.search import lexical

    monkeypatch.setattr(lexical, "RARE_DOCUMENTS", 4)
    monkeypatch.setattr(lexical, "RARE_SHARE", 0.0)
    for n in range(8):
        prompt(
            vault_memory, f"john posted the status update {n}", n, session=f"u{n}", project="infra"
        )
    prompt(vault_memory, "the financial review is due", 9, session="f", project="infra")
    prompt(vault_memory, "john asked about the build status", 10, session="b", project="shop")

    def found(project):
        hits = vault_memory.search("john financial status", kinds=["observation"], project=project)
        return [h.document.event_ids[0] for h in hits]

    assert found("shop") == ["b-10"]
    assert found("infra") == ["f-9"]  # its rare word held: asked alone, as before


def test_a_long_request_is_asked_by_its_terms_said_most_and_rarest(vault_memory, monkeypatch):
    from memvault.search import lexical

    monkeypatch.setattr(lexical, "ASKED_TERMS", 2)
    for n, text in enumerate(["alpha notes", "beta notes", "gamma notes", "delta notes"]):
        prompt(vault_memory, text, n, session=f"own-{n}")

    def found(query):
        return {h.document.event_ids[0] for h in vault_memory.search(query, kinds=["observation"])}

    # Each word is in one document: the two said most are asked, the other is not.
    assert found("alpha beta beta gamma gamma gamma") == {"own-1-1", "own-2-2"}
    # A word no document holds takes no place among them, however often it is said.
    assert found("zebra zebra zebra alpha delta") == {"own-0-0", "own-3-3"}
    # kappa, said twice but in every document, weighs least; the kept keep their order.
    query = parse("kappa alpha kappa alpha omega")
    counts = {"kappa": 8, "alpha": 1, "omega": 4}
    assert lexical.asked_terms(query, query.terms, counts, 8) == ("alpha", "omega")
    monkeypatch.setattr(lexical, "ASKED_TERMS", 1)
    assert lexical.asked_terms(query, query.terms, counts, 8) == ("alpha",)


def test_a_long_requests_numbers_are_asked_after_its_words(vault_memory, monkeypatch):
    """A pasted log's numbers (timestamps, line numbers, durations) are rare and about
    nothing: a long request is asked by its words first."""
    from memvault.search import lexical

    monkeypatch.setattr(lexical, "ASKED_TERMS", 2)
    texts = ["alpha notes", "beta notes", "at 17 57 we shipped", "17 57 again"]
    for n, text in enumerate(texts):
        prompt(vault_memory, text, n, session=f"own-{n}")

    def found(query):
        return {h.document.event_ids[0] for h in vault_memory.search(query, kinds=["observation"])}

    # The timestamp's parts are said most and are as rare as the words: still the words.
    assert found("17:57 alpha 17:57 beta 17:57") == {"own-0-0", "own-1-1"}
    query = parse("17 alpha 17 57 57 beta")
    counts = {"17": 1, "57": 1, "alpha": 3, "beta": 3}
    assert lexical.asked_terms(query, query.terms, counts, 8) == ("alpha", "beta")
    # A number still counts when the words are fewer than the terms asked.
    monkeypatch.setattr(lexical, "ASKED_TERMS", 3)
    assert lexical.asked_terms(query, query.terms, counts, 8) == ("17", "alpha", "beta")


def test_sessions_are_asked_the_words_rare_among_sessions(vault_memory, monkeypatch):
    """A word in many events can be in few sessions: whether a session search asks it is
    decided by how many sessions hold it, as their BM25 weighs it."""
    from memvault.search import lexical

    monkeypatch.setattr(lexical, "RARE_DOCUMENTS", 4)
    monkeypatch.setattr(lexical, "RARE_SHARE", 0.0)
    for n in range(5):  # five events and one session document say "parser"
        prompt(vault_memory, f"the parser broke again, take {n}", n, session="parsing")
    prompt(vault_memory, "a timeout in checkout", 10, session="checkout")
    prompt(vault_memory, "rename the settings page", 11, session="settings")
    vault_memory.index.index_now(vectors=False)
    found = {h.document.key for h in vault_memory.search("parser timeout", kinds=["session"])}
    assert found == {"parsing", "checkout"}
    # Among events, "parser" is common and only the rare word is asked, as before.
    events = vault_memory.search("parser timeout", kinds=["observation"])
    assert {h.document.session_id for h in events} == {"checkout"}


def test_a_word_half_the_sessions_say_is_not_asked_of_them(vault_memory):
    """BM25 gives a word held by half the sessions or more no weight (its idf is floored),
    and reading where whole sessions say it is the dearest read a search makes: it is
    asked of sessions only when it is all the request has."""
    for n, text in enumerate(["pool leak in checkout", "pool resize", "pool docs", "tidy"]):
        prompt(vault_memory, text, n, session=f"s{n}")
    vault_memory.index.index_now(vectors=False)

    def found(query):
        return {h.document.key for h in vault_memory.search(query, kinds=["session"])}

    assert found("pool leak") == {"s0"}
    assert found("pool") == {"s0", "s1", "s2"}
    assert found("pool docs") == {"s2"}


def test_prefixes_find_stemmed_words_and_chinese_prefixes_find_their_text(vault_memory):
    prompt(vault_memory, "the connection was configured with retries", 1)
    prompt(vault_memory, "数据库连接池配置错误", 2)
    for query in ("connection*", "configured*", "retries*", "conn*", "connection* retries"):
        assert ids(vault_memory.search(query, kinds=["observation"])) == ["obs_1"], query
    for query in ("数据库*", "连接池*", "数*"):
        assert ids(vault_memory.search(query, kinds=["observation"]))[0] == "obs_2", query


def test_fragments_in_subfolders_can_be_read_and_forgotten(vault_memory):
    folder = vault_memory.settings.fragments_path / "team"
    folder.mkdir(parents=True)
    (folder / "demo - 2026-11-30 - shared rule.md").write_text(
        "---\ntags: [agent-memory]\nproject: demo\ndate: 2026-11-30\n"
        "summary: shared lint rule\nimportance: 0.5\n---\n- lint: strict\n"
    )
    vault_memory.index.index_now(vectors=False)
    (hit,) = vault_memory.search("shared lint rule", kinds=["fragment"])
    fragment_id = vault_memory.recall.public_id(hit.document)
    assert fragment_id == "team/demo - 2026-11-30 - shared rule"
    assert "lint: strict" in vault_memory.get(fragment_id).body
    vault_memory.fragments.forget(fragment_id)
    assert not vault_memory.search("shared lint rule", kinds=["fragment"])
    assert vault_memory.get("../../memvault") is None
