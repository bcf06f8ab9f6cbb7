"""The code-domain lexicon: which words of a request bring which of the other language's
words, in Simplified and Traditional characters."""

from __future__ import annotations

import pytest

from memvault.search.lexicon import MAX_ALTERNATIVES, Lexicon, lexicon, simplified, traditional
from memvault.search.query import parse


def test_the_shipped_lexicon_reads_and_holds_a_few_hundred_entries():
    entries = lexicon().entries
    assert len(entries) >= 300
    assert all(entry.english and entry.chinese for entry in entries)


def test_a_chinese_word_brings_its_english_words_first():
    query = parse("数据库迁移超时")
    assert query.alternatives[:4] == (("databas",), ("db",), ("migrat",), ("timeout",))


def test_an_english_word_brings_its_chinese_words_in_both_scripts():
    alternatives = parse("retry the export").alternatives
    assert ("重试",) in alternatives and ("重試",) in alternatives
    assert ("导出",) in alternatives and ("匯出",) in alternatives


def test_traditional_characters_find_the_same_entries():
    assert simplified("資料庫連線逾時") == "资料库连线逾时"
    assert traditional("数据库迁移") == "數據庫遷移"
    assert traditional("列表 报表") == "列表 報表"  # 表 is 表 in both (錶 is a watch)
    alternatives = parse("資料庫連線逾時").alternatives
    assert {("databas",), ("connect",), ("timeout",)} <= set(alternatives)
    # Taiwan's word and the mainland's are spellings of one entry.
    assert ("数据", "据库") in alternatives


def test_a_multi_word_english_entry_is_a_phrase_of_its_terms():
    assert ("连接", "接池") in parse("the connection pool is exhausted").alternatives
    assert ("connect", "pool") in parse("连接池耗尽").alternatives


def test_words_the_request_already_holds_are_not_asked_again():
    alternatives = parse("测试 test").alternatives
    assert ("test",) not in alternatives and ("测试",) not in alternatives


def test_a_request_the_lexicon_does_not_know_has_no_alternatives():
    assert parse("quux zorblat").alternatives == ()


def test_a_long_request_brings_a_bounded_number_of_alternatives():
    words = "数据库 缓存 日志 部署 测试 配置 依赖 迁移 分页 时区 并发 令牌 重试 导出 内存 接口"
    pasted = " ".join([words + " 报错 超时 权限 登录 前端 后端 组件 路由 索引 事务"] * 3)
    assert len(parse(pasted).alternatives) == MAX_ALTERNATIVES


def test_a_line_without_both_languages_is_refused_with_its_number():
    with pytest.raises(ValueError, match="line 2"):
        Lexicon(["# header", "test only english"])


def test_a_request_names_each_entry_by_its_own_words():
    """The relevance floor credits a memory that says a request's word the other way:
    each named entry keeps the request's own terms for it, in the request's script."""
    said = {c.said: c.words for c in parse("資料庫連線逾時").concepts}
    assert ("資料", "料庫") in said and ("databas",) in said[("資料", "料庫")]
    english = {c.said: c.words for c in parse("the connection pool is exhausted").concepts}
    assert ("连接", "接池") in english[("connect", "pool")]
    assert parse("bump the changelog").concepts == ()
