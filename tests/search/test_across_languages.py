"""A request in one language finds memory held in the other, through the code-domain
lexicon, on a real store: and a memory in the request's own language still ranks first."""

from __future__ import annotations

import pytest

from memvault import Memory
from tests.search.test_search import ids, prompt


@pytest.fixture
def memory(tmp_path):
    with Memory.open(home=tmp_path / "home") as memory:
        yield memory


def test_a_chinese_request_finds_an_english_memory(memory):
    prompt(memory, "The database migration failed with a timeout on the users table", 1)
    prompt(memory, "Bump the lockfile and rebuild the docs", 2)
    prompt(memory, "前端样式调整", 3)
    assert ids(memory.search("数据库迁移为什么超时", kinds=["observation"]))[0] == "obs_1"


def test_a_traditional_chinese_request_finds_an_english_memory(memory):
    prompt(memory, "The database connection timeout was raised to 30 seconds", 1)
    prompt(memory, "Bump the lockfile and rebuild the docs", 2)
    assert ids(memory.search("資料庫連線逾時", kinds=["observation"]))[0] == "obs_1"


def test_an_english_request_finds_a_chinese_memory(memory):
    prompt(memory, "修复了缓存过期的问题", 1)
    prompt(memory, "前端样式调整", 2)
    assert ids(memory.search("cache expiry", kinds=["observation"]))[0] == "obs_1"


def test_a_memory_in_the_requests_language_stays_above_an_expansion_only_match(memory):
    prompt(memory, "数据库迁移完成了", 1)
    prompt(memory, "The database migration is done", 2)
    english = memory.search("database migration", kinds=["observation"])
    assert ids(english)[:2] == ["obs_2", "obs_1"]
    assert english[1].relevance < english[0].relevance
    chinese = memory.search("数据库迁移", kinds=["observation"])
    assert ids(chinese)[:2] == ["obs_1", "obs_2"]
    assert chinese[1].relevance < chinese[0].relevance
