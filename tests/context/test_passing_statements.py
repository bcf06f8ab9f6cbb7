"""What an agent said once in passing (a finding, an "instead of" it never repeated, no
word of the user's) is that session's, not the project's: a prompt block tells it with its
session when the request is about that session, never alone. On the real coding sessions
(default mode) 11 of the 13 such lines the blocks told came from no relevant session, 4 of
them given to requests from other projects. A decision the agent declares as one
("Decision: …") is the project's, as the user's own is."""

from __future__ import annotations

import pytest

from memvault import Memory
from memvault.derive.fragments import DECLARED, UNCONFIRMED
from memvault.vault.remember import Draft
from tests.context.test_focus import asked, said

FINDING = "I found that the retry loop ignores the Retry-After header of the payments API."
DECIDED = "We decided the retry loop of the payments API gives up after five attempts."
ANNOUNCED = "Decision: the payments API client logs a 429 as a warning, with no stack trace."


def conversation(memory: Memory, session: str, *turns: tuple[str, str]) -> None:
    events = []
    for prompt, reply in turns:
        events += [asked(session, len(events), prompt), said(session, len(events) + 1, reply)]
    assert memory.capture.observe_many(events).failed == 0
    memory.pipeline.extract_session(session)


def retries(memory: Memory) -> None:
    """A later session that reworked the retry loop: what the requests below are about."""
    conversation(
        memory,
        "retries",
        (
            "rework the retry loop of the payments API: honour the Retry-After header",
            "The retry loop of the payments API now waits as long as Retry-After says.",
        ),
    )
    memory.index.index_now()


def fragment(memory: Memory, summary: str):
    (found,) = [
        d for d in memory.store.list_documents("fragment", project="shop") if d.summary == summary
    ]
    return found


@pytest.fixture
def told(memory):
    # The agent's finding, said once, in a session about the payments client's errors.
    conversation(
        memory,
        "errors",
        ("the payments client logs a stack trace on every 429", FINDING),
    )
    # The user's decision, in a session about the checkout page.
    conversation(
        memory,
        "checkout",
        (f"make the checkout page show a spinner while paying. {DECIDED}", "Done: a spinner."),
    )
    memory.index.index_now()
    assert fragment(memory, FINDING).meta["confidence"] == UNCONFIRMED  # the agent's, once
    assert fragment(memory, DECIDED).meta["confidence"] > UNCONFIRMED  # the user's
    return lambda request: memory.context.context(project="shop", query=request).text


def test_a_passing_finding_is_told_with_its_session(told):
    text = told("the payments client logs a stack trace on every 429: the retry loop")
    assert FINDING in text


def test_a_passing_finding_is_not_told_when_the_request_is_about_another_session(told, memory):
    """The request's words are the finding's, but the session it is about is another:
    the one where the retry loop was reworked. The user's decision stands alone."""
    retries(memory)
    text = told("rework the retry loop of the payments API to honour the Retry-After header")
    assert "now waits as long as Retry-After says" in text  # the session the request is about
    assert FINDING not in text
    assert DECIDED in text


def test_a_decision_the_agent_declares_is_told_alone(told, memory):
    """Said once by the agent, but declared as a decision made: told when the request is
    about it, whichever session the request is about."""
    conversation(
        memory,
        "warnings",
        ("quieten the payments client's 429 logs", f"{ANNOUNCED} The tests pass."),
    )
    memory.index.index_now()
    assert fragment(memory, ANNOUNCED.removeprefix("Decision: ")).meta["confidence"] == DECLARED
    retries(memory)
    text = told(
        "rework the retry loop of the payments API to honour Retry-After; log each 429 as a warning"
    )
    assert "now waits as long as Retry-After says" in text  # the session the request is about
    assert "logs a 429 as a warning, with no stack trace" in text


def test_a_fragment_saved_by_a_tool_is_told_alone_however_loosely_held(told, memory):
    """The rule reads where a fragment came from: one saved through MCP, REST or the CLI
    (no session it was drawn from) is told on its own, whatever confidence it was given."""
    saved = "The payments API answers 429 with a Retry-After header in seconds."
    memory.fragments.remember(
        Draft("shop", saved, [f"finding: {saved}"], confidence=0.5, source="conversation")
    )
    retries(memory)
    text = told("rework the retry loop of the payments API to honour Retry-After in seconds")
    assert "now waits as long as Retry-After says" in text  # the session the request is about
    assert saved in text
