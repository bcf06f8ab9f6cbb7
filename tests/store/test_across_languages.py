"""A request finds memory in the other language through the lexicon's alternatives, the
same on every engine (the searcher over a real SQLite file and a real PostgreSQL
database), and a memory in the request's own language still ranks first."""

from __future__ import annotations

import hashlib

import pytest

from memvault.domain import DocumentDraft
from memvault.search.documents import date_terms, terms
from memvault.search.engine import Searcher
from memvault.search.ranking import RELEVANCE_ONLY

AT = "2026-12-01T10:00:00Z"
MEMORIES = {
    "english": "The database migration failed with a timeout on the users table",
    "chinese": "数据库迁移完成了，没有报错",
    "other": "Bump the lockfile and rebuild the docs",
    "frontend": "前端样式调整",
}


def _draft(key: str, text: str) -> DocumentDraft:
    return DocumentDraft(
        kind="observation",
        key=key,
        title=text[:30],
        summary=text,
        body=text,
        terms=(terms(text[:30]), terms(text), "", date_terms(AT)),
        embed_text=text,
        importance=0.5,
        updated_at=AT,
        content_hash=hashlib.sha256(text.encode()).hexdigest(),
        project="demo",
        archived=False,
        session_id="s1",
        path=None,
        event_ids=(f"e-{key}",),
        meta={},
    )


@pytest.fixture
def searcher(open_store):
    store = open_store()
    store.ensure_session("s1", project="demo", cwd="/src/demo")
    store.write_documents([_draft(key, text) for key, text in MEMORIES.items()])
    store.sync()
    return Searcher(store, weights=RELEVANCE_ONLY)


def keys(hits) -> list[str]:
    return [hit.document.key for hit in hits]


def test_a_chinese_request_finds_an_english_memory(searcher):
    assert keys(searcher.search("为什么用户表迁移超时", kinds=["observation"]))[0] == "english"


def test_an_english_memory_stays_above_an_expansion_only_match(searcher):
    hits = searcher.search("database migration", kinds=["observation"])
    assert keys(hits)[:2] == ["english", "chinese"]
    assert hits[0].relevance > hits[1].relevance


def test_a_chinese_memory_stays_above_an_expansion_only_match(searcher):
    hits = searcher.search("数据库迁移", kinds=["observation"])
    assert keys(hits)[:2] == ["chinese", "english"]
    assert hits[0].relevance > hits[1].relevance
