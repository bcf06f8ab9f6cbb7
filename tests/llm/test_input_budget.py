"""Prompts over the input limit are cut in the middle, keeping their start and end."""

from __future__ import annotations

from memvault.llm.budget import estimate_tokens, fit


def test_tokens_are_four_characters_of_alphabetic_text_or_one_cjk_character():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd" * 10) == 10
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("记忆碎片") == 4
    assert estimate_tokens("记忆 memory") == 2 + 2


def test_a_prompt_within_the_limit_is_left_alone():
    prompt = "word " * 100

    assert fit(prompt, 500) is prompt


def test_a_long_prompt_keeps_its_head_and_tail_under_the_limit():
    prompt = "START " + "middle filler " * 5000 + " END"

    fitted = fit(prompt, 500)

    assert estimate_tokens(fitted) <= 500
    assert estimate_tokens(fitted) > 450
    assert fitted.startswith("START middle")
    assert fitted.endswith("filler  END")
    assert "characters cut to fit the model's input limit" in fitted
    head, _, tail = fitted.partition("[…")
    assert abs(len(head) - len(tail)) < 100


def test_cjk_text_is_cut_per_character():
    prompt = "开始" + "记" * 3000 + "结束"

    fitted = fit(prompt, 500)

    assert estimate_tokens(fitted) <= 500
    assert fitted.startswith("开始记")
    assert fitted.endswith("记结束")
    # Counted as four characters a token, this would have kept about four times as much.
    assert fitted.count("记") < 500


def test_the_provider_sends_the_cut_prompt(llm_server, make_llm):
    prompt = "FIRST LINE\n" + "x" * 40_000 + "\nLAST LINE"

    make_llm(llm_server.base_url, max_input_tokens=600).complete("sys", prompt)

    sent = llm_server.requests[0].body["messages"][-1]["content"]
    assert estimate_tokens(sent) <= 600
    assert sent.startswith("FIRST LINE\n")
    assert sent.endswith("\nLAST LINE")
