"""The translator of search requests, against a real OpenAI-compatible server on loopback:
which language it asks for, what it never sends, and that it keeps no thread without work."""

from __future__ import annotations

import time

from memvault.llm.translate import MAX_CHARS, Translator
from memvault.search.lexicon import in_chinese


def _system(request) -> str:
    return request.body["messages"][0]["content"]


def test_chinese_is_asked_in_english_and_english_in_chinese(llm_server, make_llm):
    llm_server.respond = lambda r: "重试策略" if "Chinese" in _system(r) else "retry policy"
    translator = Translator(lambda: make_llm(llm_server.base_url), in_chinese)
    assert translator.translation("重试策略在哪里", wait=5) == "retry policy"
    assert translator.translation("where is the retry policy", wait=5) == "重试策略"
    assert ["English" in _system(r) for r in llm_server.requests] == [True, False]
    assert llm_server.requests[0].body["messages"][-1]["content"] == "重试策略在哪里"


def test_a_long_text_or_one_of_no_language_is_never_sent(llm_server, make_llm):
    translator = Translator(lambda: make_llm(llm_server.base_url), in_chinese)
    assert translator.translation("数" * (MAX_CHARS + 1), wait=1) is None
    assert translator.translation("1234 ... ---", wait=1) is None
    assert translator.translation("   ", wait=1) is None
    assert llm_server.requests == []


def test_the_answer_is_kept_on_one_line(llm_server, make_llm):
    llm_server.respond = lambda r: "retry\n  policy "
    translator = Translator(lambda: make_llm(llm_server.base_url), in_chinese)
    assert translator.translation("重试策略", wait=5) == "retry policy"


def test_without_an_llm_nothing_is_asked_again_and_the_thread_ends():
    opened = []

    def no_llm():
        opened.append(1)
        return None

    translator = Translator(no_llm, in_chinese)
    assert translator.translation("重试策略", wait=5) is None
    assert translator.translation("另一个请求", wait=5) is None
    assert opened == [1]
    deadline = time.monotonic() + 5
    while translator._thread is not None:
        assert time.monotonic() < deadline, "the translation thread should end"
        time.sleep(0.01)
