"""The PostgreSQL engine searches as the SQLite engine does: one corpus (English, Chinese,
code identifiers, phrases, prefixes, kinds, projects, archived documents) written to both,
the same LexicalQuery asked of both, the same ids in the same order with the same scores;
and the same graph written to both answers every query alike."""

from __future__ import annotations

import hashlib
import threading
from itertools import product

import pytest

from memvault.domain import DocumentDraft, Watermark
from memvault.search.documents import date_terms, terms
from memvault.search.query import parse
from memvault.store import LexicalQuery
from memvault.store.sqlite import SQLiteStore
from tests.store.graphs import delta_of

psycopg = pytest.importorskip("psycopg")

AT = "2026-11-30T10:00:00.000Z"

# (kind, key, project, archived, title, body, context, when)
CORPUS = [
    ("fragment", "pool", "alpha", False, "Connection pool timeout",
     "The connection pool timed out under load; raising the pool size fixed it.",
     "postgres pool tuning", "2026-05-08T10:00:00Z"),
    ("fragment", "pool-2", "alpha", False, "Pool sizing",
     "A pool of connections sized to the cores, with a timeout of five seconds.",
     "", "2026-05-09T10:00:00Z"),
    ("fragment", "websocket", "alpha", False, "Failing websocket tests",
     "The websocket tests fail when the server closes the socket before the handshake.",
     "ci flaky socket", "2026-06-01T10:00:00Z"),
    ("fragment", "fetch-user", "beta", False, "fetchUserRow returns None",
     "fetchUserRow in src/db/users.py returns None for a deleted user_id; UserRow.load "
     "raises KeyError.", "users.py UserRow", "2026-06-02T10:00:00Z"),
    ("fragment", "snake", "beta", False, "parse_config_file",
     "parse_config_file reads config.yaml and falls back to defaults.toml.",
     "config loader", "2026-06-03T10:00:00Z"),
    ("fragment", "apostrophe", "beta", False, "Don't retry forever",
     "Don't retry a request that can't succeed; the client's backoff caps at 30 s.",
     "retries backoff", "2026-06-04T10:00:00Z"),
    ("fragment", "chinese-1", "alpha", False, "记忆体测试",
     "数据库连接池超时，增加连接池大小后解决了问题。",
     "连接池 调优", "2026-07-01T10:00:00Z"),
    ("fragment", "chinese-2", "alpha", False, "连接数据库",
     "我们使用连接池连接数据库，超时设置为五秒。", "", "2026-07-02T10:00:00Z"),
    ("fragment", "japanese", None, False, "記憶体のテスト",
     "データベースの接続プールがタイムアウトした。", "", "2026-07-03T10:00:00Z"),
    ("fragment", "mixed", "alpha", False, "Redis 缓存 cache",
     "Redis 缓存失效 after deploy; the cache warmer 预热 keys.", "redis cache",
     "2026-07-04T10:00:00Z"),
    ("fragment", "archived", "alpha", True, "Old connection pool notes",
     "An archived note about the connection pool and its timeout.", "",
     "2025-01-01T10:00:00Z"),
    ("fragment", "repeat", "alpha", False, "Timeout timeout timeout",
     "timeout after timeout after timeout: the pool pool pool was exhausted.", "",
     "2026-08-01T10:00:00Z"),
    ("fragment", "deploy", "gamma", False, "Deploying the app",
     "Deployment runs through the deploy script; deployments are blue-green.",
     "deployer", "2026-08-02T10:00:00Z"),
    ("fragment", "no-project", None, False, "Unfiled websocket fix",
     "A fix for the websocket reconnect loop, filed under no project.", "",
     "2026-08-03T10:00:00Z"),
    ("fragment", "twin-a", "beta", False, "Pool twins",
     "Two fragments that say the same about the pool.", "", "2026-08-04T10:00:00Z"),
    ("fragment", "twin-b", "beta", False, "Pool twins",
     "Two fragments that say the same about the pool.", "", "2026-08-04T10:00:00Z"),
    ("summary", "s-alpha", "alpha", False, "Session on pool timeouts",
     "We debugged the pool timeout and the websocket tests.", "pool websocket",
     "2026-05-08T12:00:00Z"),
    ("summary", "s-beta", "beta", False, "Session on user rows",
     "fetchUserRow and parse_config_file were fixed.", "", "2026-06-02T12:00:00Z"),
    ("summary", "s-chinese", "alpha", False, "会话：连接池",
     "讨论了连接池超时和数据库连接。", "", "2026-07-01T12:00:00Z"),
    ("observation", "1", "alpha", False, "Edit src/pool.py",
     "Raised max_size of the connection pool to 20.", "pool.py edit", "2026-05-08T10:01:00Z"),
    ("observation", "2", "alpha", False, "Run pytest tests/test_ws.py",
     "3 failed: websocket handshake timeout.", "pytest", "2026-06-01T10:01:00Z"),
    ("observation", "3", "beta", False, "Read src/db/users.py",
     "def fetchUserRow(user_id): ...", "users.py", "2026-06-02T10:01:00Z"),
    ("observation", "4", "alpha", True, "Old observation about the pool",
     "Pool exhausted long ago.", "", "2025-01-02T10:00:00Z"),
    ("observation", "5", "alpha", False, "连接池配置",
     "修改了连接池的配置文件 config.yaml。", "", "2026-07-01T10:02:00Z"),
]  # fmt: skip

QUERIES = [
    "connection pool timeout",
    "pool",
    "timeout",
    "websocket tests failing",
    '"connection pool" timeout',
    '"pool timeout"',
    '"connection pool"',
    "deplo*",
    "connection*",
    "fetchUserRow",
    "fetch user row",
    "UserRow",
    "parse_config_file",
    "config.yaml",
    "users.py",
    "don't retry",
    '"don\'t retry"',
    "can't",
    "连接池",
    "连接池超时",
    "数据库",
    '"连接池超时"',
    "连*",
    "記憶",
    "記憶体",
    "redis 缓存",
    "cache*",
    "May 2026",
    "8 May",
    "nothing-matches-this",
    "pool websocket fetchUserRow 连接池",
]

FILTERS = [
    {"kinds": ["fragment"]},
    {"kinds": ["fragment", "summary", "observation"]},
    {"kinds": ["fragment"], "project": "alpha"},
    {"kinds": ["fragment", "observation"], "project": "beta"},
    {"kinds": ["fragment"], "include_archived": True},
    {"kinds": ["observation"], "project": "alpha", "include_archived": True},
    {"kinds": ["fragment", "summary"], "project": "nowhere"},
]


def _draft(row, *, archived=None, project=None, body=None) -> DocumentDraft:
    kind, key, proj, arch, title, text, context, when = row
    text = text if body is None else body
    proj = proj if project is None else project
    return DocumentDraft(
        kind=kind,
        key=key,
        title=title,
        summary=text[:40],
        body=text,
        terms=(terms(title), terms(text), terms(context), date_terms(when)),
        embed_text=f"{title}\n{text}",
        importance=0.5,
        updated_at=when,
        content_hash=hashlib.sha256(f"{title}|{text}|{context}".encode()).hexdigest(),
        project=proj,
        archived=arch if archived is None else archived,
        session_id="s1",
        path=f"memory/{key}.md" if kind == "fragment" else None,
        event_ids=(f"e-{key}",),
        meta={"key": key, "词": "值"},
    )


def _load(store) -> None:
    """The corpus, written as the indexer writes it: in batches, some documents written
    again (unchanged, archived, re-worded), one deleted."""
    drafts = [_draft(row) for row in CORPUS]
    store.write_documents(drafts[:8], cursor=("observations", 3))
    store.write_documents(drafts[8:])
    store.write_documents([_draft(CORPUS[1], archived=True), _draft(CORPUS[1], archived=False)])
    store.write_documents([_draft(CORPUS[2], project="beta")])  # same content: scope only
    store.write_documents(
        [_draft(CORPUS[12], body="Deployment runs through the deploy script, twice.")]
    )
    store.write_documents(
        [_draft(("fragment", "gone", "alpha", False, "Gone pool", "pool", "", AT))]
    )
    store.write_documents(deletes=[("fragment", "gone")])
    store.record_access([("fragment", "pool"), ("fragment", "pool"), ("summary", "s-beta")], AT)
    store.move_access("fragment", [("pool", "pool-moved"), ("pool-moved", "pool")])
    store.sync()


@pytest.fixture(scope="module")
def engines(postgres_cluster, tmp_path_factory):
    from memvault.store.postgres import PostgresStore

    sqlite = SQLiteStore(tmp_path_factory.mktemp("parity") / "memvault.db")
    postgres = PostgresStore(postgres_cluster.database())
    for store in (sqlite, postgres):
        store.ensure_session("s1", project="alpha", cwd="/src/alpha")
        store.ensure_session("s2", project="beta", cwd="/src/beta")
        _load(store)
        _graph(store)
    yield sqlite, postgres
    sqlite.close()
    postgres.close()


def assert_same_hits(sqlite_hits, postgres_hits):
    assert [i for i, _ in postgres_hits] == [i for i, _ in sqlite_hits]
    for (_, expected), (_, got) in zip(sqlite_hits, postgres_hits, strict=True):
        assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("text", QUERIES)
def test_a_query_finds_the_same_documents_in_the_same_order_with_the_same_scores(engines, text):
    sqlite, postgres = engines
    match = parse(text).match()
    asked = 0
    for filters in FILTERS:
        expected = sqlite.lexical_search(match, **filters)
        assert_same_hits(expected, postgres.lexical_search(match, **filters))
        asked += len(expected)
    if text != "nothing-matches-this":
        assert asked, "the corpus should answer this query somewhere"


@pytest.mark.parametrize(
    "query",
    [
        LexicalQuery(terms=("pool", "timeout", "connect"), anchor=("timeout",)),
        LexicalQuery(terms=("pool", "timeout", "connect"), anchor=("pool", "timeout"), all_of=True),
        LexicalQuery(terms=("pool", "websocket"), anchor=("pool", "websocket")),
        LexicalQuery(terms=("pool",), fields=("title",)),
        LexicalQuery(terms=("pool", "tune"), fields=("context",)),
        LexicalQuery(terms=("may", "2026"), fields=("dates",)),
        LexicalQuery(phrases=(("connect", "pool"),), required_fields=("body",)),
        LexicalQuery(prefixes=(("time",),), required_fields=("title", "body", "context")),
        LexicalQuery(terms=('he"llo', "pool")),
        LexicalQuery(terms=("pool", "pool")),
        LexicalQuery(terms=("x_y", "fetchuserrow")),
        LexicalQuery(terms=("___",)),
        LexicalQuery(terms=("pool",), phrases=(("___",),)),
        LexicalQuery(alternatives=(("连接", "接池"), ("超时",), ("databas",))),
        LexicalQuery(terms=("pool",), alternatives=(("连接", "接池"), ("pool",))),
        LexicalQuery(phrases=(("connect", "pool"),), alternatives=(("超时",), ("timeout",))),
        LexicalQuery(prefixes=(("deplo",),), alternatives=(("部署",),)),
        # A request's names, asked of what documents touched (``search/lexical.py``).
        LexicalQuery(
            alternatives=(("userrow",), ("users",), ("config", "loader")), fields=("context",)
        ),
    ],
)
def test_structured_queries_match_and_rank_alike(engines, query):
    sqlite, postgres = engines
    for filters in FILTERS:
        assert_same_hits(
            sqlite.lexical_search(query, **filters), postgres.lexical_search(query, **filters)
        )


def test_field_weights_and_the_newest_window_rank_alike(engines):
    sqlite, postgres = engines
    match = parse("pool timeout websocket 连接池").match()
    kinds = ["fragment", "summary", "observation"]
    for weights in [(1.0, 1.0, 0.5, 0.5), (2.0, 1.0, 0.25, 0.0), (0.3, 0.7, 0.1, 0.9)]:
        for newest, project in product((None, 2, 5, 12), (None, "alpha", "beta")):
            asked = {"kinds": kinds, "weights": weights, "newest": newest, "project": project}
            expected = sqlite.lexical_search(match, **asked)
            assert_same_hits(expected, postgres.lexical_search(match, **asked))
    top = sqlite.lexical_search(match, kinds=kinds, limit=3)
    assert len(top) == 3
    assert_same_hits(top, postgres.lexical_search(match, kinds=kinds, limit=3))


def test_term_counts_and_the_document_count_are_the_same(engines):
    sqlite, postgres = engines
    asked = ["pool", "timeout", "连接", "接池", "fetchuserrow", "don't", "2026", "absent", "a_b"]
    asked += ["POOL", "!!!", "pool"]  # one token twice, none at all, one term twice
    for cap in (0, 1, 3, 100):
        assert postgres.term_counts(asked, cap=cap) == sqlite.term_counts(asked, cap=cap)
    assert postgres.document_count() == sqlite.document_count() == len(CORPUS)


def test_documents_read_back_the_same(engines):
    sqlite, postgres = engines
    ids = [doc_id for doc_id, _ in sqlite.lexical_search(
        LexicalQuery(terms=("pool", "连接")), kinds=["fragment", "summary", "observation"],
        include_archived=True,
    )]  # fmt: skip
    assert ids
    assert postgres.documents(ids) == sqlite.documents(ids)
    assert postgres.document_kinds([*ids, 999]) == sqlite.document_kinds([*ids, 999])
    assert postgres.document("fragment", "pool") == sqlite.document("fragment", "pool")
    assert postgres.document("fragment", "gone") is sqlite.document("fragment", "gone") is None
    for kind in ("fragment", "summary", "observation"):
        for project in (None, "alpha"):
            for archived in (False, True):
                assert postgres.list_documents(
                    kind, project=project, include_archived=archived, limit=5, offset=1
                ) == sqlite.list_documents(
                    kind, project=project, include_archived=archived, limit=5, offset=1
                )
        assert postgres.document_stamps(kind) == sqlite.document_stamps(kind)
    assert sorted(postgres.document_ids(kinds=["fragment", "observation"], project="alpha")) == (
        sorted(sqlite.document_ids(kinds=["fragment", "observation"], project="alpha"))
    )
    assert postgres.fragment_counts() == sqlite.fragment_counts()
    assert postgres.cursor("observations") == sqlite.cursor("observations") == 3
    assert postgres.cursor("never") == sqlite.cursor("never") == 0


def test_a_listing_keeps_the_documents_whose_meta_holds_a_value(engines):
    """A whole JSON string, ASCII case aside; LIKE's wildcards are plain characters."""
    listed = {}
    for store in engines:

        def keys(value, store=store):
            found = store.list_documents(
                "fragment", meta_holds=value, include_archived=True, limit=50
            )
            return [d.key for d in found]

        everything = keys(None)
        assert len(everything) > 2
        assert keys("pool") == keys("POOL") == ["pool"]  # not "pool-2"
        assert keys("值") == keys("词") == everything  # non-ASCII, a key as well
        assert keys("po%") == keys("po_l") == keys("pool-") == []
        listed[type(store).__name__] = [keys(v) for v in (None, "pool", "值", "snake")]
    sqlite, postgres = listed.values()
    assert sqlite == postgres


def test_revisions_and_vectors_follow_as_on_sqlite(engines):
    sqlite, postgres = engines
    for after in (0, 5, 20):
        assert postgres.documents_to_embed(after, limit=50) == sqlite.documents_to_embed(
            after, limit=50
        )
        assert postgres.documents_since(after) == sqlite.documents_since(after)
    pending = sqlite.documents_to_embed(0, limit=3)
    vectors = [(doc_id, revision, bytes([doc_id, 0, 255, 7])) for doc_id, revision, _ in pending]
    stale = (pending[0][0], pending[0][1] - 1, b"stale")
    for store in (sqlite, postgres):
        store.write_vectors("m", [*vectors, stale], cursor=("embedded", pending[-1][1]))
    assert sorted(postgres.vectors("m")) == sorted(sqlite.vectors("m"))
    assert {v for _, _, v in postgres.vectors("m")} == {v for _, _, v in vectors}
    assert postgres.cursor("embedded") == sqlite.cursor("embedded")


@pytest.fixture
def postgres(postgres_cluster):
    from memvault.store.postgres import PostgresStore

    store = PostgresStore(postgres_cluster.database(), pool_size=4)
    yield store
    store.close()


def test_a_document_holding_a_nul_is_indexed_and_found_alike(postgres, tmp_path):
    sqlite = SQLiteStore(tmp_path / "memvault.db")
    row = ("fragment", "nul", "delta", False, "Binary\x00junk", "zeta\x00eta theta", "", AT)
    try:
        for store in (sqlite, postgres):
            store.write_documents([_draft(row), _draft(CORPUS[0])])
        match = parse("zeta theta pool").match()
        assert_same_hits(
            sqlite.lexical_search(match, kinds=["fragment"]),
            postgres.lexical_search(match, kinds=["fragment"]),
        )
    finally:
        sqlite.close()
    assert postgres.document("fragment", "nul").body == "zeta\ufffdeta theta"


def test_a_follower_by_revision_never_passes_a_write_still_to_commit(postgres):
    """A writer that drew a revision holds back the next writer until it commits, so no
    larger revision is visible before it."""
    from memvault.store.postgres import documents as postgres_documents

    first = psycopg.connect(postgres.url)
    try:
        postgres_documents.write_documents(first, [_draft(CORPUS[0])], [], None)  # not committed
        second = threading.Thread(target=postgres.write_documents, args=([_draft(CORPUS[1])],))
        second.start()
        second.join(0.5)
        assert second.is_alive(), "the second writer must wait for the first"
        assert postgres.documents_to_embed(0, limit=10) == []
        first.commit()
        second.join(10)
        assert not second.is_alive()
    finally:
        first.close()
    seen = postgres.documents_to_embed(0, limit=10)
    assert [(doc_id, revision) for doc_id, revision, _ in seen] == [(1, 1), (2, 2)]


def test_concurrent_writers_leave_a_follower_nothing_to_skip(postgres):
    written = [_draft((*row[:1], f"{row[1]}-{n}", *row[2:])) for n in range(6) for row in CORPUS]
    batches = [written[i : i + 3] for i in range(0, len(written), 3)]
    seen: dict[int, int] = {}
    done = threading.Event()

    def follow():
        cursor = 0
        while True:
            finished = done.is_set()
            for doc_id, revision, _ in postgres.documents_to_embed(cursor, limit=20):
                seen[doc_id] = revision
                cursor = revision
            if finished and not postgres.documents_to_embed(cursor, limit=1):
                return

    def write(mine):
        for batch in mine:
            postgres.write_documents(batch)

    follower = threading.Thread(target=follow)
    writers = [threading.Thread(target=write, args=(batches[i::4],)) for i in range(4)]
    follower.start()
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join(30)
    done.set()
    follower.join(30)
    assert len(seen) == len(written) == postgres.document_count()
    assert sorted(seen.values()) == list(range(1, len(written) + 1))


# -- the graph ------------------------------------------------------------------------------


def _graph(store) -> None:
    store.write_graph(
        "s1",
        delta_of(
            ("file", "src/db/pool.py", "obs_1"),
            ("file", "src/db/users.py", "obs_2"),
            ("library", "psycopg", "obs_1"),
            ("library", "psycopg_pool", "obs_2"),
            ("function", "fetchUserRow", "obs_2"),
            ("concept", "连接池", "obs_3"),
            ("error", "PoolTimeout", "obs_3"),
            ("concept", "db", "obs_3"),
            relations=[
                ("src/db/pool.py", "psycopg", "imports", "obs_1"),
                ("src/db/pool.py", "psycopg_pool", "imports", "obs_2"),
                ("src/db/users.py", "fetchUserRow", "modifies", "obs_2"),
                ("PoolTimeout", "src/db/pool.py", "causes", "obs_3"),
                ("连接池", "psycopg_pool", "related_to", "obs_3"),
            ],
        ),
        through=Watermark(AT, 3),
    )
    store.write_graph(  # a run behind the watermark: nothing written
        "s1", delta_of(("file", "ignored.py", "obs_9")), through=Watermark(AT, 2)
    )
    store.write_graph(
        "s2",
        delta_of(
            ("file", "src/db/pool.py", "obs_4"),
            ("library", "psycopg", "obs_4"),
            ("library", "psycopg", "obs_5"),
            ("decision", "Use a connection pool", "obs_5"),
            relations=[
                ("src/db/pool.py", "psycopg", "imports", "obs_4"),
                ("Use a connection pool", "src/db/pool.py", "uses", "obs_5"),
            ],
        ),
        through=Watermark(AT, 5),
    )
    store.write_fragment_graph(
        delta_of(
            ("concept", "连接池", "frag-1"),
            ("file", "src/tmp/scratch.py", "frag-1"),
            relations=[("连接池", "src/tmp/scratch.py", "related_to", "frag-1")],
        )
    )
    store.write_fragment_graph(delta_of(("concept", "连接池", "frag-1")))  # counted once
    store.forget_graph_source("frag-1")  # the scratch file goes, 连接池 keeps its others


GRAPH_QUERIES = [
    {},
    {"kind": "library"},
    {"kind": "file", "limit": 1, "offset": 1},
    {"text": "pool"},
    {"text": "POOL"},
    {"text": "db"},
    {"text": "src"},
    {"text": "连接池"},
    {"text": "ps", "kind": "library"},
    {"text": "nothing"},
    {"text": "50%_"},
    {"start": "file:src/db/pool.py"},
    {"start": "file:src/db/pool.py", "depth": 2},
    {"start": "file:src/db/pool.py", "depth": 2, "kind": "library", "text": "pool"},
    {"start": "library:psycopg", "depth": 3, "limit": 3},
    {"start": "function:FetchUserRow", "depth": 0},
    {"start": "file:src/tmp/scratch.py"},
    {"start": "nonsense"},
]


@pytest.mark.parametrize("asked", GRAPH_QUERIES, ids=str)
def test_graph_queries_answer_alike(engines, asked):
    sqlite, postgres = engines
    assert postgres.graph_query(**asked) == sqlite.graph_query(**asked)


def test_graph_counts_and_sessions_behind_it_are_the_same(engines):
    sqlite, postgres = engines
    assert postgres.graph_stats() == sqlite.graph_stats()
    assert postgres.graph_stats().to_dict()["totalNodes"] == 8 + 1
    assert postgres.sessions_behind_graph(limit=10) == sqlite.sessions_behind_graph(limit=10)
    assert postgres.get_session("s1").graph_extracted == Watermark(AT, 3)


def test_a_name_holding_a_nul_is_one_node_found_alike(postgres, tmp_path):
    sqlite = SQLiteStore(tmp_path / "memvault.db")
    delta = delta_of(("error", "bad\x00byte in header", "frag-1"), ("file", "io.py", "frag-1"))
    try:
        for store in (sqlite, postgres):
            store.write_fragment_graph(delta)
            store.write_fragment_graph(delta)  # the same node again, not a second one
        for asked in (
            {"start": "error:bad\x00byte in header"},
            {"text": "bad\x00byte"},
            {"text": "ba"},
            {},
        ):
            shown = [
                [
                    (n.kind, n.key.replace("\x00", "\ufffd"), n.mentions)
                    for n in s.graph_query(**asked).nodes
                ]
                for s in (sqlite, postgres)
            ]
            assert shown[0] == shown[1], asked
            assert shown[0] or ("text" in asked and "\x00" in asked["text"]), asked
        assert postgres.graph_stats() == sqlite.graph_stats()
        # Past the NUL too (SQLite's trigram table reads a name only up to it).
        assert [n.name for n in postgres.graph_query(text="byte in").nodes] == [
            "bad\ufffdbyte in header"
        ]
    finally:
        sqlite.close()


def test_ascii_text_is_cut_into_the_tokens_sqlite_makes_of_it():
    from memvault.store.postgres.bm25 import _tokenizer, tokenize

    every = "".join(chr(c) for c in range(1, 128))
    texts = [every, every[::-1], "fetchUserRow x_y don't 3.14 A-B c++ ÀB 数据 mixed-ÄÖ"]
    assert tokenize(texts) == _tokenizer.split(texts)


@pytest.mark.parametrize("text", ["数据库连接池超时", "connection pool timeout", "資料庫快取"])
def test_a_requests_alternatives_find_the_same_documents_with_the_same_scores(engines, text):
    sqlite, postgres = engines
    match = parse(text).alternative_match()
    assert match.alternatives
    asked = 0
    for filters in FILTERS:
        expected = sqlite.lexical_search(match, **filters)
        assert_same_hits(expected, postgres.lexical_search(match, **filters))
        asked += len(expected)
    assert asked, "the corpus should answer the alternatives somewhere"
