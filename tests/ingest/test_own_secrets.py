"""The server's own secrets (its bearer secret, the LLM and embedding API keys) never reach
the store, wherever they appear in an event."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from memvault import Memory
from memvault.ingest import INLINE_DATA_CHARS
from memvault.ingest.redact import MIN_SECRET_LENGTH, Redactor
from tests.helpers import envelope

# None of these matches a pattern rule: only the configured secrets' literal rule finds them.
SECRET = "mv-7f3a9c2e41d8b6"
LLM_KEY = "llm-2b7e151628aed2a6"
EMBEDDING_KEY = "emb-9d8c7b6a5f4e3d2c"


def _database_bytes(home: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(home.glob("memvault.db*")))


def test_the_configured_secrets_never_reach_the_database_file(tmp_path):
    home = tmp_path / "home"
    settings = {"secret": SECRET, "llm_api_key": LLM_KEY, "embedding_api_key": EMBEDDING_KEY}
    with Memory.open(home=home, **settings) as memory:
        memory.observe(
            envelope(
                project=f"demo-{SECRET}",
                cwd=f"/home/dev/{LLM_KEY}/app",
                data={
                    "tool_name": "Bash",
                    "tool_input": {"command": f"export MEMVAULT_SECRET={SECRET}"},
                    "tool_output": f'{{"key": "{EMBEDDING_KEY}"}}\n',
                    EMBEDDING_KEY: "an object key too",
                },
            )
        )
        (event,) = memory.store.events_after("s1", 0, limit=10)
    assert event.project == "demo-[REDACTED:memvault_secret]"
    assert event.cwd == "/home/dev/[REDACTED:llm_api_key]/app"
    assert event.payload["tool_input"]["command"] == (
        "export MEMVAULT_SECRET=[REDACTED:memvault_secret]"
    )
    assert event.payload["tool_output"] == '{"key": "[REDACTED:embedding_api_key]"}\n'
    assert event.payload["[REDACTED:embedding_api_key]"] == "an object key too"
    stored = _database_bytes(home)
    for value in (SECRET, LLM_KEY, EMBEDDING_KEY):
        assert value.encode() not in stored


def test_observe_async_and_the_bulk_paths_redact_the_configured_secret_too(tmp_path):
    big = "x" * (INLINE_DATA_CHARS + 1) + SECRET  # prepared off the event loop

    async def observe(memory: Memory) -> None:
        await memory.capture.observe_async(envelope(n=1, data={"out": f"MEMVAULT_SECRET={SECRET}"}))
        await memory.capture.observe_async(envelope(n=2, data={"out": big}))
        await memory.capture.observe_many_async([envelope(n=3, data={"out": SECRET})])

    with Memory.open(home=tmp_path / "home", secret=SECRET) as memory:
        asyncio.run(observe(memory))
        memory.observe_many([envelope(n=4, data={"out": SECRET})])
        events = memory.store.events_after("s1", 0, limit=10)
    assert [event.payload["out"] for event in events] == [
        "MEMVAULT_SECRET=[REDACTED:memvault_secret]",
        big.replace(SECRET, "[REDACTED:memvault_secret]"),
        "[REDACTED:memvault_secret]",
        "[REDACTED:memvault_secret]",
    ]


@pytest.mark.parametrize("secret", ['quo"te\\back-slash', "tab\tand\nnewline-9", "café-ünïcødé-42"])
def test_a_secret_that_json_escapes_is_found_in_the_decoded_strings(secret):
    redactor = Redactor({"memvault_secret": secret})
    value, text = redactor.redact_json({"out": f"value: {secret}!", "list": [secret]})
    assert value == {
        "out": "value: [REDACTED:memvault_secret]!",
        "list": ["[REDACTED:memvault_secret]"],
    }
    assert json.loads(text) == value
    assert json.dumps(secret)[1:-1] not in text and secret not in text


def test_the_longer_of_two_overlapping_secrets_is_removed_whole():
    redactor = Redactor({"llm_api_key": "abcdefgh", "memvault_secret": "abcdefgh-and-more"})
    assert redactor.redact_text("x abcdefgh-and-more y abcdefgh") == (
        "x [REDACTED:memvault_secret] y [REDACTED:llm_api_key]"
    )


def test_one_key_set_for_both_llm_and_embeddings_is_named_once():
    redactor = Redactor({"llm_api_key": LLM_KEY, "embedding_api_key": LLM_KEY})
    assert redactor.redact_text(LLM_KEY) == "[REDACTED:llm_api_key]"


def test_a_secret_shorter_than_the_minimum_is_not_looked_for():
    short = "t" * (MIN_SECRET_LENGTH - 1)
    redactor = Redactor({"memvault_secret": short})
    text = f"the {short} and {short}s of a common word"
    assert redactor.redact_text(text) == text
    exact = "t" * MIN_SECRET_LENGTH
    assert Redactor({"memvault_secret": exact}).redact_text(f"a {exact} b") == (
        "a [REDACTED:memvault_secret] b"
    )


def test_a_redactor_without_configured_secrets_still_applies_every_pattern():
    text = "token: Bearer abcdefghijklmnop1234"
    assert Redactor().redact_text(text) == "token: Bearer [REDACTED:bearer]"
    assert Redactor({"memvault_secret": None}).redact_text(text) == Redactor().redact_text(text)


def test_a_session_start_stores_no_configured_secret(tmp_path):
    home = tmp_path / "home"
    with Memory.open(home=home, secret=SECRET) as memory:
        memory.context.start_session(
            {
                "sessionId": "s2",
                "project": f"demo-{SECRET}",
                "cwd": f"/home/dev/{SECRET}",
                "title": f"fix {SECRET}",
            }
        )
        session = memory.reads.session("s2")
    assert session.project == "demo-[REDACTED:memvault_secret]"
    assert SECRET.encode() not in _database_bytes(home)
