"""The analyzer: the same terms at index and query time, in any script."""

from __future__ import annotations

import pytest

from memvault.analyzer import similarity, tokens


def test_english_is_lowercased_stemmed_and_free_of_stopwords():
    assert tokens("The Runner was running the tests") == ["runner", "run", "test"]


def test_chinese_becomes_overlapping_pairs_so_two_character_queries_match():
    assert tokens("長期記憶系統") == ["長期", "期記", "記憶", "憶系", "系統"]
    assert set(tokens("記憶")) <= set(tokens("長期記憶系統"))
    assert tokens("我") == ["我"]


@pytest.mark.parametrize("text", ["メモリが足りない", "메모리 부족", "接口命名统一用 fetch"])
def test_japanese_korean_and_mixed_text_are_tokenized(text):
    terms = tokens(text)
    assert terms and all(" " not in term for term in terms)


def test_identifiers_give_their_parts_too():
    assert tokens("fetchUser") == ["fetchus", "fetch", "user"]
    assert tokens("HTTPServer v2") == ["httpserver", "http", "server", "v2", "2"]
    assert tokens("get_user_id") == ["get", "user", "id"]


def test_full_width_and_composed_forms_are_normalized():
    assert tokens("ＡＰＩ") == tokens("API")
    assert tokens("café") == tokens("cafe\u0301")


def test_similarity_is_one_for_the_same_terms_and_zero_for_none():
    assert similarity("API naming uses fetch", "api names use fetch") == pytest.approx(1.0)
    assert similarity("記憶", "system") == 0.0
    assert similarity("", "anything") == 0.0
    assert 0 < similarity("fetch prefix for loaders", "fetch prefix rule") < 1
