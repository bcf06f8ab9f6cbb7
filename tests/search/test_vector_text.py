"""What a vector reads: the head of a document or a query, about one window of the model;
the lexical index keeps the whole text. Pure: no model, no store."""

from __future__ import annotations

import pytest

from memvault.derive.digest import Digest
from memvault.domain import Session, Watermark
from memvault.embeddings.window import (
    CJK_CHARS_PER_TOKEN,
    GENEROUS_CHARS_PER_TOKEN,
    VECTOR_TOKENS,
    head,
)
from memvault.search.documents import session_document

LONG_ENGLISH = " ".join(f"step{i} rebuilds the parser cache" for i in range(2000))
LONG_CHINESE = "重新构建解析器的缓存并检查数据库连接" * 200  # 3,800 characters


def test_a_short_text_is_read_whole():
    assert head("fix the flaky login test") == "fix the flaky login test"
    assert head("修复登录测试") == "修复登录测试"


def test_a_long_text_is_cut_to_its_head_with_room_for_what_the_model_reads():
    cut = head(LONG_ENGLISH)
    assert LONG_ENGLISH.startswith(cut)
    # Alphabetic text reads as 2 to 5 characters a token: the cut keeps 6 a token, and
    # leaves the exact count to a model that can make it.
    assert len(cut) == VECTOR_TOKENS * GENEROUS_CHARS_PER_TOKEN


def test_chinese_is_cut_at_two_characters_a_token():
    """Chinese reads as 0.55 to 0.78 tokens a character: two a token keeps what fits."""
    cut = head(LONG_CHINESE)
    assert LONG_CHINESE.startswith(cut)
    assert len(cut) == VECTOR_TOKENS * CJK_CHARS_PER_TOKEN
    mixed = head("对 parser 缓存的修改 " * 400, 64)
    assert 64 * CJK_CHARS_PER_TOKEN <= len(mixed) < 64 * GENEROUS_CHARS_PER_TOKEN


def test_a_budget_below_one_token_is_refused():
    with pytest.raises(ValueError, match="at least one token"):
        head("text", 0)


def _session() -> Session:
    return Session(
        id="s1",
        project="blast",
        cwd="/src/blast",
        agent_id=None,
        title=None,
        board_session_id=None,
        created_at="2026-11-30T10:00:00.000Z",
        first_event_at=None,
        last_event_at=None,
        event_count=2,
        observation_count=2,
        summarized=Watermark(),
        extracted=Watermark(),
        reflected=Watermark(),
        graph_extracted=Watermark(),
        summary_revision=0,
        summarized_observation_count=0,
        last_sweep_attempt_at=None,
    )


@pytest.mark.parametrize("request_text", [LONG_ENGLISH, LONG_CHINESE])
def test_a_long_sessions_vector_text_is_its_head_and_its_terms_keep_the_whole(request_text):
    digest = Digest(
        requests=[request_text, "then rename the zebrafinch module"],
        decisions=[],
        files=[],
        commands=[],
        targets=[],
        replies=[],
        event_ids=["s1:0"],
        first_at="2026-11-30T10:00:00.000Z",
        last_at="2026-11-30T10:00:05.000Z",
    )
    document = session_document(_session(), digest, project="blast")
    assert document.embed_text == head(document.embed_text)
    assert len(document.embed_text) <= VECTOR_TOKENS * GENEROUS_CHARS_PER_TOKEN
    assert "zebrafinch" not in document.embed_text  # past the head: no vector reads it
    assert "zebrafinch" in " ".join(document.terms)  # the lexical index reads it
