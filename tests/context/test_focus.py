"""A prompt block tells of the earlier session a request is about, and of nothing when no
session's memories together hold enough of the request (search/focus.py)."""

from __future__ import annotations

import pytest

from memvault import Memory


@pytest.fixture
def memory(tmp_path):
    with Memory.open(home=tmp_path / "home", embeddings="none", llm="none") as opened:
        yield opened


def event(session: str, n: int, hook: str, data: dict) -> dict:
    return {
        "hookType": hook,
        "sessionId": session,
        "eventId": f"{session}:{n}",
        "project": "shop",
        "cwd": "/src/shop",
        "timestamp": f"2026-11-20T10:{n // 60:02d}:{n % 60:02d}.000Z",
        "data": data,
    }


def said(session: str, n: int, text: str) -> dict:
    return event(session, n, "assistant_response", {"assistantResponse": text})


def asked(session: str, n: int, text: str) -> dict:
    return event(session, n, "prompt_submit", {"prompt": text})


def history(memory: Memory) -> None:
    memory.capture.observe_many(
        [
            asked("pool", 0, "the database pool leaks connections under load"),
            said("pool", 1, "PgPool never released the client on errors: release it in finally."),
            said("pool", 2, "The pool's leak test now opens 500 connections and checks none leak."),
            asked("login", 0, "make the login page load faster"),
            said("login", 1, "The login page lazy-loads its images and reuses CDN connections."),
            asked("deploy", 0, "the staging deploy fails on the health check"),
            said("deploy", 1, "The staging endpoint answered 502 until the health check waited."),
        ]
    )
    memory.index.index_now()


def told_sessions(memory: Memory, packed) -> set[str]:
    """The host sessions a block's session lines and activity lines come from."""
    sessions = set()
    for block in packed.items():
        if block["kind"] == "session":
            sessions.add(block["id"])
        elif block["kind"] == "observation":
            sessions.add(memory.store.document("observation", block["id"]).session_id)
    return sessions


def test_the_block_tells_only_of_the_session_the_request_is_about(memory):
    history(memory)
    packed = memory.context.context(
        project="shop", query="connections leak from the database pool again under load"
    )
    assert told_sessions(memory, packed) == {"pool"}
    # The login session's reply shares "connections" and "load": not told.
    assert "CDN" not in packed.text


def test_a_block_that_tells_a_session_says_only_that_no_fragment_was_relevant(tmp_path):
    with Memory.open(home=tmp_path / "en", embeddings="none", llm="none", language="en") as memory:
        history(memory)
        packed = memory.context.context(
            project="shop", query="connections leak from the database pool again under load"
        )
    first, *rest = packed.text.splitlines()
    # The report line is about the fragments read; what follows it is still relevant.
    assert first.endswith("→ no relevant fragments"), first
    assert "PgPool" in "\n".join(rest)
    assert "nothing relevant" not in packed.text


def test_a_request_only_partly_matched_by_one_session_gets_nothing(memory):
    history(memory)
    # The deploy session holds "staging endpoint", about a third of the request's weighed
    # words: enough for one memory's floor, not for a session to be about the request.
    packed = memory.context.context(
        project="shop", query="rotate the TLS certificate of the staging endpoint"
    )
    assert packed.items() == []
    assert "staging" not in packed.text


def test_a_session_is_told_by_its_lines_that_hold_the_request_words(memory):
    history(memory)
    packed = memory.context.context(project="shop", query="the staging deploy health check")
    assert told_sessions(memory, packed) == {"deploy"}
    lines = [b["text"] for b in packed.items() if b["kind"] == "observation"]
    assert lines and all("staging" in line or "health" in line for line in lines)


def test_lines_that_say_near_the_same_are_told_once(memory):
    """A session that pasted one analyzer warning again and again, each time with another
    figure, is told it once, and its other lines keep their places."""
    warning = (
        "For the code present, we get this error: Refactor this method to reduce its "
        "Cognitive Complexity from {} to the 15 allowed. How can I resolve this?"
    )
    memory.capture.observe_many(
        [asked("sonar", n, warning.format(20 + n)) for n in range(6)]
        + [said("sonar", 6, "Split MergeFiles into smaller methods to reduce the complexity.")]
    )
    memory.index.index_now()
    packed = memory.context.context(
        project="shop", query="reduce the cognitive complexity of this method"
    )
    lines = [b["text"] for b in packed.items() if b["kind"] == "observation"]
    assert sum("Cognitive Complexity from" in line for line in lines) == 1
    assert any("Split MergeFiles" in line for line in lines)


def test_a_chinese_request_is_weighed_by_the_pairs_memory_holds(memory):
    """Chinese is indexed as character pairs; the pairs of a request that span two words
    ("库连" of "数据库连接池") are in no memory and do not count against every session."""
    memory.capture.observe_many(
        [
            asked("pool-zh", 0, "数据库连接池在高负载下泄漏"),
            said("pool-zh", 1, "连接池出错时没有释放客户端：改为在 finally 里释放。"),
            asked("login", 0, "make the login page load faster"),
        ]
    )
    memory.index.index_now()
    packed = memory.context.context(project="shop", query="数据库连接池又泄漏了怎么办")
    assert told_sessions(memory, packed) == {"pool-zh"}


def test_pairs_no_memory_holds_are_not_weighed():
    from memvault.search.context import term_weights

    weights = term_weights(["测试", "试失", "失败", "pool"], {"测试": 3, "失败": 2}, 200)
    assert set(weights) == {"测试", "失败", "pool"}  # an unseen English word still counts


def test_a_chinese_request_is_told_of_the_english_session_it_is_about(memory):
    """A developer asks in Chinese about work held in English: the lexicon's English words
    for the request's (数据库 database, 连接池 connection pool, 泄漏 leak) count as the
    request's words held, so the session passes the floor and its lines are told; before,
    the request's pairs were held by no memory and weighed nothing, and the block was
    empty."""
    history(memory)
    packed = memory.context.context(project="shop", query="数据库连接池泄漏是怎么修好的")
    assert told_sessions(memory, packed) == {"pool"}
    lines = [b["text"] for b in packed.items() if b["kind"] == "observation"]
    assert any("PgPool never released the client" in line for line in lines)


def test_a_pair_memory_says_in_the_other_language_is_weighed_and_held():
    from memvault.search.context import holding, term_weights
    from memvault.search.query import parse

    query = parse("重试策略")  # 重试 is "retry" in the lexicon; 试策 spans two words
    assert ("retri",) in [w for c in query.concepts for w in c.words]
    counts = {"retri": 4}
    weights = term_weights(query.terms, counts, 200, query.concepts)
    assert "重试" in weights and "试策" not in weights
    assert weights["重试"] == term_weights(["retri"], counts, 200)["retri"]
    assert "重试" in holding({"retri", "polici"}, query.concepts)
    assert "重试" not in holding({"polici"}, query.concepts)
    assert term_weights(query.terms, counts, 200) == {}  # without the lexicon: nothing
    # The other way round: an English word memory holds only in Chinese weighs as that does.
    english = parse("retry policy")
    weighed = term_weights(english.terms, {"重试": 4}, 200, english.concepts)
    assert weighed["retri"] == weights["重试"] < weighed["polici"]


@pytest.mark.parametrize("counted_again", [False, True])
def test_the_asking_prompt_weighs_the_same_whether_it_is_indexed_yet_or_not(memory, counted_again):
    """A host stores the prompt, then asks for its block: the prompt may be indexed by then
    or not. Its words are weighed as if its session were not in the index, so the block is
    the same either way (counted, the pairs only the prompt holds weighed against every
    session, and the session it is about was not told)."""
    memory.capture.observe_many(
        [
            asked("pool-zh", 0, "数据库连接池在高负载下泄漏"),
            said("pool-zh", 1, "连接池出错时没有释放客户端：改为在 finally 里释放。"),
            asked("login", 0, "make the login page load faster"),
        ]
    )
    memory.index.index_now()
    request = "数据库连接池又泄漏了怎么办"
    before = memory.context.context(project="shop", query=request, session_id="ask")
    memory.capture.observe_many([asked("ask", 0, request)])
    memory.index.index_now()
    if counted_again:  # the searcher's cached counts of the words, read again
        memory.index.searcher.counts.clear()
    after = memory.context.context(project="shop", query=request, session_id="ask")
    assert told_sessions(memory, before) == {"pool-zh"}
    assert told_sessions(memory, after) == {"pool-zh"}


def test_a_request_naming_a_test_is_told_of_the_session_that_wrote_its_name(memory):
    """To the index ``test_refresh_token_rotation`` is four words, and a session about how
    refresh tokens rotate holds them all, ranked higher; the session that wrote the test's
    name whole is the one a request naming it is about."""
    memory.capture.observe_many(
        [
            asked("design", 0, "design how refresh tokens rotate: each refresh token is used once"),
            said("design", 1, "Rotation test: a reused refresh token fails with 401."),
            asked("flaky", 0, "test_refresh_token_rotation fails one run in five, never locally"),
            said(
                "flaky", 1, "The frozen clock does not reach TokenService: slow runners expire it."
            ),
            asked("deploy", 0, "the staging deploy fails on the health check"),
        ]
    )
    memory.index.index_now()
    text = memory.context.context(
        project="shop", query="why does test_refresh_token_rotation fail"
    ).text
    assert "The frozen clock does not reach TokenService" in text
    assert "design how refresh tokens rotate" not in text
