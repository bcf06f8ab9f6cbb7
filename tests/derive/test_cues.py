"""Cue phrases in English and Chinese."""

from __future__ import annotations

import pytest

from memvault.derive import cues


@pytest.mark.parametrize(
    "sentence",
    [
        "We decided to keep SQLite as the default engine.",
        "Let's go with httpx instead of requests.",
        "决定改用 PostgreSQL",
        "接口命名统一使用 fetch 前缀",
        "結論：採用增量摘要",
        # a choice directed, as an instruction or a polite question
        "Use 'Path.GetRandomFileName()' instead.",
        "can we please use the CommandLineParser library for cli handling?",
        "Could we switch to pnpm for the workspace?",
        "能不能改用 httpx？",
    ],
)
def test_decisions(sentence):
    assert cues.is_decision(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "Should we use Postgres instead of SQLite?",  # a question, not a decision
        "Switched deploy.sh to scp; the deploy passes.",  # a report of what was done
        "已修复：改用 scp 上传",
        "Let me read the file first.",
        # said of the code, not decided
        "The Spectre.Console analyzer requires using `AnsiConsole` instead.",
        "It should call `GoBack()` instead.",
        "Can you use the grep tool to find it?",
        "We decided earlier to use httpx instead.",  # a decision recalled
    ],
)
def test_not_decisions(sentence):
    assert not cues.is_decision(sentence) or cues.is_narration(sentence)


@pytest.mark.parametrize(
    "sentence", ["Is the cache still needed?", "是否需要保留缓存", "要不要加索引", "这样可以吗"]
)
def test_questions(sentence):
    assert cues.is_question(sentence)


@pytest.mark.parametrize(
    "sentence",
    ["Next step: wire the summary into the board.", "TODO: add a test", "下一步：写测试"],
)
def test_next_steps(sentence):
    assert cues.is_next_step(sentence)


def test_sentences_split_both_scripts_and_skip_code():
    text = "先看 src/api.ts。Then run it! ```\nrm -rf /\n``` 结论：可以。"

    assert cues.sentences(text) == ["先看 src/api.ts。", "Then run it!", "结论：可以。"]


def test_statement_drops_the_label_that_introduces_it():
    assert cues.statement("好的，已记录：API 命名统一使用 `fetch` 前缀。") == (
        "API 命名统一使用 `fetch` 前缀"
    )
    assert cues.statement("Decision: plain text fragments.") == "plain text fragments"


def test_chatter_and_tasks():
    assert cues.is_chatter("thanks!")
    assert cues.is_chatter("好的")
    assert not cues.is_task("继续")
    assert not cues.is_task("/model")
    assert not cues.is_task("狀態更新")  # a board operation, not a task
    assert cues.is_task("rename getUser to fetchUser")
