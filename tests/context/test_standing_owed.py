"""The project's standing memory reaches a session once, and again after its conversation
was compacted: with its start's block where the host takes one, else with the next prompt's
block (Gemini takes no block at a start; Cursor runs no start again after a compaction)."""

from __future__ import annotations

from memvault.domain import iso, utc_now
from memvault.memory.standing import GIVEN
from memvault.vault.remember import Draft
from tests.context.conftest import start
from tests.helpers import envelope

QUERY = "how long is the access token valid"
CACHE = Draft(
    project="demo-app",
    summary="Sessions are cached in Redis for 10 minutes",
    facts=["decision: sessions cached in Redis, 10 min"],
    description="session cache",
)


def ask(memory, session: str, query: str = QUERY):
    """The prompt, recorded as the hook sends it first, then the block for it."""
    n = len(memory.reads.events(session))
    memory.observe(envelope(session, n, hookType="prompt_submit", data={"prompt": query}))
    return memory.context.context(
        project="demo-app", query=query, session_id=session, answering="UserPromptSubmit"
    )


def fragments(packed) -> list[str]:
    return [b["text"] for b in packed.blocks if b["kind"] == "fragment"]


def test_a_session_given_no_start_block_gets_the_standing_memory_with_its_first_prompt(
    auth_memory,
):
    first = ask(auth_memory, "one")
    told = fragments(first)
    assert len(told) == 2
    # What the request is about first; the report line says which is the project's memory.
    assert "access token: JWT" in told[0] and "argon2id" in told[1]
    report = first.blocks[0]["text"]
    assert "login tokens" in report.split("→ relevant")[0]
    assert report.rstrip().endswith("→ project memory")
    assert ask(auth_memory, "one").text == ""
    # Given as the project's memory, not for a request: a later request's block that is
    # about it leaves it out as anything given.
    assert fragments(ask(auth_memory, "one", "which algorithm hashes passwords")) == []
    injected = auth_memory.store.injected("one")
    assert injected[GIVEN] is False
    given = {
        key.rsplit(" - ", 1)[-1]: by for (kind, key), by in injected.items() if kind == "fragment"
    }
    assert given == {"login tokens.md": True, "password hashing.md": False}
    # Carried along, not chosen for the task: no use of it is counted.
    used = {
        d.key.rsplit(" - ", 1)[-1]: d.access_count
        for d in auth_memory.store.list_documents("fragment", project="demo-app", limit=10)
    }
    assert used == {"login tokens.md": 1, "password hashing.md": 0}


def test_a_session_whose_start_gave_the_standing_memory_gets_only_its_requests(auth_memory):
    start(auth_memory, "one")
    auth_memory.remember(CACHE)  # standing memory the start could not give
    assert ask(auth_memory, "one").text == ""
    packed = ask(auth_memory, "one", "where are the sessions cached")
    assert [t for t in fragments(packed) if "Redis" in t]
    assert all("argon2id" not in t for t in fragments(packed))


def test_after_a_compaction_the_next_prompt_gets_the_standing_memory_again(auth_memory):
    start(auth_memory, "one")
    auth_memory.remember(CACHE)
    assert ask(auth_memory, "one").text == ""
    auth_memory.context.compacted("one", iso(utc_now()))
    told = fragments(ask(auth_memory, "one", "add a dark mode toggle to the settings page"))
    assert len(told) == 3
    assert {"access token" in t or "argon2id" in t or "Redis" in t for t in told} == {True}
    # Once.
    assert ask(auth_memory, "one", "and a test for the toggle").text == ""


def test_a_session_memvault_does_not_know_is_given_its_request_only(auth_memory):
    """No event of it yet: nothing records what it was given, so nothing is owed to it."""
    packed = auth_memory.context.context(project="demo-app", query=QUERY, session_id="unknown")
    assert len(fragments(packed)) == 1
