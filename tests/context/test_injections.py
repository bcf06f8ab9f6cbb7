"""Within a session, a block gives only what the session was not given before, and every
block given is recorded in the session."""

from __future__ import annotations

from memvault import Memory
from memvault.derive.activity import steps
from tests.context.conftest import HASHING, TOKENS, start
from tests.helpers import envelope

QUERY = "how long is the access token valid"


def _ask(memory, session: str, query: str = QUERY, answering: str = "UserPromptSubmit"):
    """The prompt, recorded as the hook sends it first, then the block for it."""
    n = len(memory.reads.events(session))
    memory.observe(envelope(session, n, hookType="prompt_submit", data={"prompt": query}))
    return memory.context.context(
        project="demo-app", query=query, session_id=session, answering=answering
    )


def test_a_fragment_given_at_session_start_is_not_given_again_with_the_prompt(auth_memory):
    assert "login tokens" in start(auth_memory, "one")
    packed = _ask(auth_memory, "one")
    assert packed.text == "" and packed.blocks == []


def test_a_second_prompt_gets_only_what_is_new_and_nothing_when_nothing_is(memory):
    """A session that had its start's block (the project knew nothing then)."""
    for session in ("one", "two"):
        start(memory, session)
    memory.remember(TOKENS)
    memory.remember(HASHING)
    first = _ask(memory, "one")
    assert [b["kind"] for b in first.blocks].count("fragment") == 1
    assert _ask(memory, "one").text == ""
    second = _ask(memory, "one", "which algorithm hashes passwords")
    assert "argon2id" in second.text and "access token: JWT" not in second.text
    # Another session is given the same fragment afresh.
    assert "access token: JWT" in _ask(memory, "two").text


def test_what_a_session_was_given_outlives_a_restart(tmp_path):
    from tests.context.conftest import TOKENS

    home = tmp_path / "home"
    with Memory.open(home=home) as memory:
        memory.remember(TOKENS)
        assert "access token: JWT" in _ask(memory, "one").text
    with Memory.open(home=home) as memory:
        assert _ask(memory, "one").text == ""


def test_each_block_is_recorded_in_the_session_with_what_it_gave(auth_memory):
    start(auth_memory, "one")
    _ask(auth_memory, "one", "which algorithm hashes passwords")
    events = [e for e in auth_memory.reads.events("one") if e.hook_type == "context_injected"]
    assert [e.payload["answered"] for e in events] == ["SessionStart"]
    # The prompt's fragment was in the standing block already: nothing new, nothing recorded.
    given = events[0].payload
    assert {i["kind"] for i in given["items"]} == {"report", "fragment"}
    assert given["tokens"] > 0
    observation = next(
        o for o in auth_memory.reads.observations("one") if o.hook_type == "context_injected"
    )
    assert observation.type == "host_internal"
    assert observation.title == "Memory given (SessionStart): 2 memories"
    # Not the session's work: no step of its summary, nothing to learn from.
    assert all(s.seq != observation.event_seq for s in steps(auth_memory.reads.events("one"), []))


def test_a_record_of_an_injection_is_never_injected(auth_memory):
    start(auth_memory, "one")
    auth_memory.index.index_now(vectors=False)
    kept = auth_memory.store.list_documents("observation")
    assert [d.meta.get("hookType") for d in kept] == ["context_injected"]
    searched = auth_memory.index.searcher.search("memory given SessionStart", kinds=["observation"])
    assert not searched  # no words of it indexed
    start(auth_memory, "two")
    packed = _ask(auth_memory, "two", "memory given SessionStart fragments")
    assert "Memory given" not in packed.text


def test_without_a_session_every_request_gets_the_whole_block(auth_memory):
    one = auth_memory.context.context(project="demo-app", query=QUERY)
    assert one.text == auth_memory.context.context(project="demo-app", query=QUERY).text
    assert "access token: JWT" in one.text
