"""A search request translated by the configured LLM: a real OpenAI-compatible server on
loopback answers; the translation's words find memory in the other language, each request
is translated once, a search waits for it a bounded time, the context block never."""

from __future__ import annotations

import time

import pytest

from memvault import Memory
from tests.llm.conftest import require_sdk
from tests.llm_server import LLMServer, Request
from tests.search.test_search import ids, prompt

ASKED = "对账为什么周末不跑"  # no word of it in the lexicon
TRANSLATED = "Why does the reconciliation job not run on weekends?"


def translations(server: LLMServer) -> list[Request]:
    return [r for r in server.requests if "memory search engine" in _system(r)]


def _system(request: Request) -> str:
    return " ".join(m["content"] for m in request.body["messages"] if m["role"] == "system")


@pytest.fixture
def server():
    require_sdk("openai")
    with LLMServer() as server:
        server.respond = lambda r: TRANSLATED if "into English" in _system(r) else "ok"
        yield server


def _open(home, server: LLMServer | None, **settings) -> Memory:
    if server is None:
        return Memory.open(home=home, llm="none", **settings)
    return Memory.open(home=home, llm="openai", llm_url=server.base_url, llm_model="m", **settings)


def _remember(memory: Memory) -> None:
    prompt(memory, "The nightly reconciliation job now skips weekends on purpose", 1)
    prompt(memory, "Bump the lockfile and rebuild the docs", 2)


def test_a_chinese_request_finds_an_english_memory_through_its_translation(tmp_path, server):
    with _open(tmp_path / "offline", None) as memory:
        _remember(memory)
        assert "obs_1" not in ids(memory.search(ASKED, kinds=["observation"]))
    # Waits for the translation as long as a loaded machine may need (it is quick).
    with _open(tmp_path / "online", server, translate_wait_seconds=30) as memory:
        _remember(memory)
        assert ids(memory.search(ASKED, kinds=["observation"]))[0] == "obs_1"
    (asked,) = translations(server)
    assert asked.body["messages"][-1]["content"] == ASKED


def test_a_request_is_translated_once(tmp_path, server):
    with _open(tmp_path / "home", server, translate_wait_seconds=30) as memory:
        _remember(memory)
        for _ in range(3):
            assert ids(memory.search(ASKED, kinds=["observation"]))[0] == "obs_1"
    assert len(translations(server)) == 1


def test_a_search_waits_for_a_translation_a_bounded_time(tmp_path, server):
    server.delay = 2.0
    with _open(tmp_path / "home", server, translate_wait_seconds=0.2) as memory:
        _remember(memory)
        started = time.monotonic()
        hits = ids(memory.search(ASKED, kinds=["observation"]))
        assert time.monotonic() - started < 1.5
        assert "obs_1" not in hits
        # The translation arrives later and serves the next search of the same words.
        deadline = time.monotonic() + 10
        while "obs_1" not in ids(memory.search(ASKED, kinds=["observation"])):
            assert time.monotonic() < deadline, "the translation never arrived"
            time.sleep(0.1)


def test_the_context_block_never_waits_for_a_translation(tmp_path, server):
    server.delay = 2.0
    with _open(tmp_path / "home", server, translate_wait_seconds=5.0) as memory:
        _remember(memory)
        started = time.monotonic()
        memory.context.context(project="demo", query=ASKED)
        assert time.monotonic() - started < 1.5
        # It asked for one: a search after it finds the memory without a second call.
        assert ids(memory.search(ASKED, kinds=["observation"]))[0] == "obs_1"
    assert len(translations(server)) == 1


def test_a_failed_translation_leaves_the_search_as_it_was(tmp_path, server):
    server.respond = lambda r: 400 if "memory search engine" in _system(r) else "ok"
    with _open(tmp_path / "home", server) as memory:
        _remember(memory)
        hits = ids(memory.search(ASKED, kinds=["observation"]))
        assert "obs_1" not in hits
        assert ids(memory.search("reconciliation", kinds=["observation"]))[0] == "obs_1"
