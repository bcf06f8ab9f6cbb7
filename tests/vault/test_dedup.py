"""Dedup on write: an identical or near-identical fragment merges into the one already
there; fragments that state different things stay apart, in English and Chinese."""

from __future__ import annotations

import pytest

from memvault.vault.fragments import Fragment
from memvault.vault.likeness import conflict, likeness
from memvault.vault.remember import DEFAULT_THRESHOLD, Draft, remember

TASK = "task: Fix the login"
FILES = "files: src/auth.py"

# (first fragment, second fragment), each (summary, facts).
MERGE = {
    "identical": (
        ("Use PKCE for the login flow.", ["decision: Use PKCE for the login flow", TASK, FILES]),
        ("Use PKCE for the login flow.", ["decision: Use PKCE for the login flow", TASK, FILES]),
    ),
    "case, spacing and punctuation": (
        ("Use PKCE for the login flow.", ["decision: Use PKCE for the login flow"]),
        ("use  PKCE for the Login flow", ["Decision:  use PKCE for the login flow."]),
    ),
    "end punctuation": (
        ("The database runs out of connections.", ["pool: 5"]),
        ("The database runs out of connections!", ["pool: 5"]),
    ),
    "reordered facts": (
        ("Deploy checklist for the API.", ["step: migrate", "step: build image", "step: roll out"]),
        ("Deploy checklist for the API.", ["step: roll out", "step: migrate", "step: build image"]),
    ),
    "reordered list in a line": (
        ("Supported browsers are Chrome, Firefox and Safari.", ["browsers: Chrome, Firefox"]),
        ("Supported browsers are Safari, Chrome and Firefox.", ["browsers: Firefox, Chrome"]),
    ),
    "same summary, one fact another": (
        ("Data loaders are named fetchX.", ["rule: fetchX, not getX", "why: one verb per read"]),
        ("Data loaders are named fetchX.", ["rule: fetchX, not getX", "scope: src/api"]),
    ),
    "same summary, facts added": (
        ("Data loaders are named fetchX.", ["rule: fetchX, not getX"]),
        ("Data loaders are named fetchX.", ["rule: fetchX, not getX", "scope: src/api", "why: x"]),
    ),
    "same decision from another task": (
        ("Use PKCE for the login flow.", ["decision: Use PKCE for the login flow", "task: #12"]),
        ("Use PKCE for the login flow.", ["decision: Use PKCE for the login flow", "task: #48"]),
    ),
    "another word for choosing (similarity 0.83)": (
        ("We chose pgbouncer in transaction mode for the API pool.", ["pool: pgbouncer"]),
        ("Use pgbouncer in transaction mode for the API pool.", ["pool: pgbouncer"]),
    ),
    "one more word of stance (similarity 0.85)": (
        ("Run migrations with alembic before starting the server.", ["tool: alembic"]),
        ("Always run migrations with alembic before starting the API server.", ["tool: alembic"]),
    ),
    "the same failure, its log line from another run": (
        (
            "`npm test` failed (connect ECONNREFUSED 127.0.0.1:5432); fixed: edited pool.js.",
            [
                "failed: `npm test`",
                "error: Error: connect ECONNREFUSED 127.0.0.1:5432 at PgPool.connect "
                "(src/db/pool.js:14) pid 4411",
            ],
        ),
        (
            "`npm test` failed (connect ECONNREFUSED 127.0.0.1:5432); fixed: edited pool.js.",
            [
                "failed: `npm test`",
                "error: Error: connect ECONNREFUSED 127.0.0.1:5432 at PgPool.connect "
                "(src/db/pool.js:14) pid 5120",
            ],
        ),
    ),
    "the same failure, logged at another time": (
        ("`make e2e` failed ([2026-11-30 10:00:01] ERROR pool exhausted).", ["fix: pool 20"]),
        ("`make e2e` failed ([2026-11-30 14:12:09] ERROR pool exhausted).", ["fix: pool 20"]),
    ),
    "zh full-width punctuation and spacing": (
        ("登入流程改用 PKCE。", ["決定: 登入流程改用 PKCE", "檔案: src/auth.py"]),
        ("登入流程改用PKCE", ["決定：登入流程改用PKCE。", "檔案： src/auth.py"]),
    ),
    "zh reordered facts": (
        ("部署前先跑資料庫遷移，再建映像。", ["步驟: 跑遷移", "步驟: 建映像", "步驟: 上線"]),
        ("部署前先跑資料庫遷移，再建映像。", ["步驟: 上線", "步驟: 跑遷移", "步驟: 建映像"]),
    ),
    "zh same summary, a fact added": (
        ("快取統一用 Redis。", ["決定: 快取統一用 Redis"]),
        ("快取統一用 Redis。", ["決定: 快取統一用 Redis", "原因: 多台伺服器共用"]),
    ),
}
APART = {
    "same topic, another decision": (
        ("Use PKCE for the login flow.", ["decision: Use PKCE for the login flow", TASK, FILES]),
        (
            "Use the implicit flow for the login flow.",
            ["decision: Use the implicit flow for the login flow", TASK, FILES],
        ),
    ),
    "same sentence, another store": (
        ("Store sessions in Redis.", ["decision: Store sessions in Redis", TASK, FILES]),
        ("Store sessions in Postgres.", ["decision: Store sessions in Postgres", TASK, FILES]),
    ),
    "another version": (
        ("Pin Python to 3.11 in CI.", ["decision: Pin Python to 3.11 in CI"]),
        ("Pin Python to 3.12 in CI.", ["decision: Pin Python to 3.12 in CI"]),
    ),
    "another number": (
        ("The pool size is 5 connections.", ["pool: 5"]),
        ("The pool size is 50 connections.", ["pool: 50"]),
    ),
    "another price": (
        ("The Pro plan costs $20 per month.", ["price: $20/month"]),
        ("The Pro plan costs $25 per month.", ["price: $25/month"]),
    ),
    "same summary, a fact with another number": (
        ("Uploads are retried.", ["retries: 3", "backoff: exponential"]),
        ("Uploads are retried.", ["retries: 5", "backoff: exponential"]),
    ),
    "negation": (
        ("Use Redis for the session cache.", ["decision: Use Redis for the session cache"]),
        ("Do not use Redis for the session cache.", ["decision: Do not use Redis for it"]),
    ),
    "never": (
        ("Retries are enabled for uploads.", ["retries: enabled"]),
        ("Retries are never enabled for uploads.", ["retries: never enabled"]),
    ),
    "unrelated": (
        ("Logo colours are blue and white.", ["brand: blue"]),
        ("Use PKCE for the login flow.", ["decision: Use PKCE for the login flow"]),
    ),
    "zh another decision": (
        ("登入流程改用 PKCE。", ["決定: 登入流程改用 PKCE"]),
        ("登入流程改用 implicit flow。", ["決定: 登入流程改用 implicit flow"]),
    ),
    "zh same topic": (
        ("部署用 GitHub Actions。", ["決定: 部署用 GitHub Actions"]),
        ("部署用 GitLab CI。", ["決定: 部署用 GitLab CI"]),
    ),
    "zh negation": (
        ("快取用 Redis。", ["決定: 快取用 Redis"]),
        ("快取不用 Redis。", ["決定: 快取不用 Redis"]),
    ),
    "zh another number": (
        ("連線池大小設為 5。", ["連線池: 5"]),
        ("連線池大小設為 20。", ["連線池: 20"]),
    ),
    "zh another version": (
        ("Python 版本固定為 3.11。", ["版本: 3.11"]),
        ("Python 版本固定為 3.12。", ["版本: 3.12"]),
    ),
}


def save(folder, fragment):
    summary, facts = fragment
    return remember(folder, Draft(project="demo-app", summary=summary, facts=facts))


@pytest.mark.parametrize("pair", MERGE.values(), ids=MERGE.keys())
def test_near_identical_fragments_merge(tmp_path, pair):
    first, second = pair
    written = save(tmp_path, first)
    again = save(tmp_path, second)
    assert again.action == "merged", again.similarity
    assert again.path == written.path
    assert len(list(tmp_path.glob("*.md"))) == 1


@pytest.mark.parametrize("pair", APART.values(), ids=APART.keys())
def test_fragments_that_say_different_things_stay_apart(tmp_path, pair):
    first, second = pair
    save(tmp_path, first)
    other = save(tmp_path, second)
    assert other.action == "created", other.similarity
    assert other.similarity is None or other.similarity <= DEFAULT_THRESHOLD
    assert len(list(tmp_path.glob("*.md"))) == 2


@pytest.mark.parametrize("pair", MERGE.values(), ids=MERGE.keys())
def test_the_measure_is_symmetric_and_one_for_identical_text(pair):
    (a, fa), (b, fb) = pair
    assert likeness(a, fa, b, fb) == pytest.approx(likeness(b, fb, a, fa))
    assert likeness(a, fa, a, fa) == pytest.approx(1.0)
    assert conflict(a, fa, b, fb) is None


def test_saving_the_same_fragment_three_times_keeps_one_file(tmp_path):
    fragment = ("Sessions expire after 30 minutes of inactivity.", ["timeout: 30 min"])
    for _ in range(3):
        save(tmp_path, fragment)
    files = list(tmp_path.glob("*.md"))
    assert len(files) == 1
    assert Fragment.read(files[0]).body.count("- timeout: 30 min") == 1


def test_an_embedder_that_scores_a_repeat_below_the_threshold_still_merges(tmp_path):
    """The words decide a repeat: a semantic score of 0.78 for the same text (what the
    stored vector of a fragment's indexed text can give) does not make a copy."""
    fragment = ("Use PKCE for the login flow.", ["decision: Use PKCE for the login flow"])
    save(tmp_path, fragment)
    again = remember(
        tmp_path,
        Draft(project="demo-app", summary=fragment[0], facts=fragment[1]),
        similar=lambda text, fragments: [0.78 for _ in fragments],
    )
    assert again.action == "merged"


@pytest.mark.parametrize(
    "name", ["another version", "negation", "same sentence, another store", "zh negation"]
)
def test_a_high_semantic_score_does_not_merge_fragments_that_disagree(tmp_path, name):
    first, second = APART[name]
    save(tmp_path, first)
    other = remember(
        tmp_path,
        Draft(project="demo-app", summary=second[0], facts=second[1]),
        similar=lambda text, fragments: [0.95 for _ in fragments],
    )
    assert other.action == "created"


def test_a_semantic_paraphrase_without_a_conflict_merges(tmp_path):
    save(tmp_path, ("The database runs out of connections.", ["pool: 5"]))
    again = remember(
        tmp_path,
        Draft(
            project="demo-app",
            summary="Database connection pool gets exhausted.",
            facts=["pool: 5"],
        ),
        similar=lambda text, fragments: [0.9 for _ in fragments],
    )
    assert again.action == "merged" and again.similarity == pytest.approx(0.9)
