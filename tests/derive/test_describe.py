"""A pipeline-made fragment's file name is a short description of what it says: its title
when it has one, else its summary's leading clause, without the punctuation soup, IP
addresses, line numbers and paths (reduced to their file stem) of the text it came from;
at most 8 words and 60 characters, and always a valid file name."""

from __future__ import annotations

import re
import time

import pytest

from memvault.derive.describe import MAX_WIDTH, MAX_WORDS, describe
from memvault.derive.fragments import extract_fragments
from memvault.vault.fragments import fragment_name
from tests.pipeline.sessions import ENGLISH_FIX, ROOT, bash, bash_failure, edit, prompt, reply
from tests.pipeline.sessions import conversation as steps_of

# The error a Node service logs when its database is down, with its stack.
PG_ERROR = (
    "Error: connect ECONNREFUSED 127.0.0.1:5432 at PgPool.connect (src/db/pool.js:14)) "
    "at process.processTicksAndRejections (node:internal/process/task_queues:95:5)"
)

DESCRIBED = {
    "a pitfall's title: command and error, no address, port, path or line": (
        "",
        f"npm test fails with {PG_ERROR}",
        "npm test fails with connect ECONNREFUSED",
    ),
    "a pitfall's summary when no title": (
        f"`npm test` failed ({PG_ERROR}); fixed: edited src/db/pool.js",
        None,
        "npm test failed connect ECONNREFUSED",
    ),
    "an exit status says no more than failed": (
        "",
        "npm test fails with Command exited with non-zero status code 1",
        "npm test fails",
    ),
    "a finding's lead-in goes, the clause stays": (
        "The problem is in the `_run_search` method of the `SearchCLI` class, where it "
        "filters out unavailable engines.",
        None,
        "Problem in run_search method of SearchCLI class",
    ),
    "narration before the point goes": (
        "Now let's fix the config.py file to correctly import BaseSettings from "
        "pydantic-settings instead of pydantic.",
        None,
        "Fix config file to correctly import BaseSettings",
    ),
    "a path and its line number are the file's stem": (
        "Fixed the import in src/memvault/api/routes.py:120 for the search route.",
        None,
        "Fixed import in routes for search route",
    ),
    "a Windows path is its file's stem": (
        "The build of C:\\dev\\app\\App.Console\\Services\\BatchManager.cs fails on line 1037 "
        "since the using directive is gone.",
        None,
        "The build of BatchManager fails",
    ),
    "a decision's own words": (
        "Use pgbouncer in transaction mode for the API pool: it keeps connections under 100.",
        None,
        "Use pgbouncer in transaction mode for API pool",
    ),
    "a Chinese label and the clause after it": (
        "根因分析：`extract_text_tokens` 返回一个 `dict`，其 keys 是 `cot`, `answer`。",
        None,
        "extract_text_tokens 返回一个 dict",
    ),
    "a label in bold": (
        "**Root cause**: the pool is exhausted when workers start together.",
        None,
        "the pool is exhausted when workers start together",
    ),
    "a Chinese sentence's first clause": (
        "`flash-attn==2.8.3` 构建失败，原因是你的系统上缺少 CUDA Toolkit（开发工具包）。",
        None,
        "flash-attn 2.8.3 构建失败",
    ),
    "a host's error (tests/fixtures, Claude Code's stop failure)": (
        "",
        "API Error: Rate limit reached",
        "API Error Rate limit reached",
    ),
    "an LLM's title wins over the summary": (
        "The pool runs out of connections when the workers start together.",
        "Pool exhaustion at worker start",
        "Pool exhaustion at worker start",
    ),
    "a lead-in that would leave too little stays": (
        "The issue is exactly here.",
        None,
        "The issue is exactly here",
    ),
    "an announcement before the finding goes": (
        "The issue is clear now: there's a version mismatch between "
        "`TestableIO.System.IO.Abstractions.TestingHelpers` (version 18.0.0.0) and "
        "`TestableIO.System.IO.Abstractions.Wrappers` (version 17.0.0.0).",
        None,
        "There's a version mismatch between TestingHelpers",
    ),
    # Seen in real sessions, each named by its first words before: "Issue", "The issue is
    # likely", "I've successfully refactored menu handling to use", "Instead of this complex
    # algorithm let me use", "This is much better".
    "a long dotted name by its own last part": (
        "The issue is in `IterativeMergeOrchestrator.StartIterativeMergeProcess` on line 46.",
        None,
        "Issue in StartIterativeMergeProcess",
    ),
    "where the issue likely is": (
        "The issue is likely in how the `FindLineInFile` and `FindBestMatchingLine` methods "
        "are working with the actual file content.",
        None,
        "Issue in how FindLineInFile and FindBestMatchingLine methods",
    ),
    # Lead-ins that named a fragment by "The issue is likely that …", "But the problem is …",
    # "The issue is interesting": the point follows them.
    "a hedged lead-in goes": (
        "The issue is probably that the cache key ignores the locale.",
        None,
        "The cache key ignores the locale",
    ),
    "a lead-in after a conjunction goes": (
        "But the problem is that the retry loop never resets its counter.",
        None,
        "The retry loop never resets its counter",
    ),
    "a lead-in before what there is goes": (
        "The problem is there are two handlers registered for the same route.",
        None,
        "There are two handlers registered for same route",
    ),
    "a lead-in before what the issue is goes": (
        "The issue is a race between the flush and the shutdown hook.",
        None,
        "A race between flush and shutdown hook",
    ),
    "what the issue is related to": (
        "The issue is related to how the parser treats trailing commas.",
        None,
        "How the parser treats trailing commas",
    ),
    "where the issue specifically is": (
        "The issue is specifically with the session cookie's path.",
        None,
        "Issue with the session cookie's path",
    ),
    "an issue called interesting, by the reason given": (
        "The issue is interesting because I also see in the changelog that the old flag was "
        "removed on purpose.",
        None,
        "The old flag was removed on purpose",
    ),
    "a finding after how it was reached and 'I found'": (
        "经过排查，我发现缓存目录没有被清理。",
        None,
        "缓存目录没有被清理",
    ),
    "an assent and 'the problem is that' go": (
        "是的，问题在于配置文件的编码不是 UTF-8。",
        None,
        "配置文件的编码不是 UTF-8",
    ),
    "'I found' that leaves too little stays": ("我发现的问题", None, "我发现的问题"),
    "a connective and where it was read go": (
        "From the logs, it seems like the issue is with the token refresh timer.",
        None,
        "Issue with the token refresh timer",
    ),
    "a connective with its comma goes": (
        "Similarly, the export job now skips archived rows.",
        None,
        "The export job now skips archived rows",
    ),
    "a word that only looks like a connective stays": (
        "First-run wizard crashes on start.",
        None,
        "First-run wizard crashes on start",
    ),
    "where the issue is, its line number gone": (
        "The problem is on line 88 where the token is parsed twice.",
        None,
        "Problem where the token is parsed twice",
    ),
    "a negated place of the issue stays": (
        "The problem is not with the parser itself.",
        None,
        "The problem is not with the parser itself",
    ),
    "a relative clause whose antecedent was only symbols": (
        "The issue is likely with `⚙️` which is a compound emoji (gear + variation selector) "
        "that might render differently.",
        None,
        "Issue with compound emoji gear variation selector",
    ),
    "a change reported, by the change": (
        "I've successfully refactored the menu handling to use dictionaries instead of switch "
        "statements, which eliminated the duplicated case.",
        None,
        "Refactored menu handling to use dictionaries",
    ),
    "an opening contrast, by what is chosen": (
        "Instead of this complex algorithm, let me use a simpler approach that processes "
        "each side independently.",
        None,
        "Use simpler approach that processes each side independently",
    ),
    "an opening contrast that leaves too little stays": (
        "Instead of seeing potentially many different diffs between all possible version "
        "pairs, you'll now see.",
        None,
        "Instead of seeing potentially many different diffs",
    ),
    "a verdict, by what it judges": (
        "This is much better - I'll integrate the winget distribution into your existing "
        "workflow rather than creating a separate one.",
        None,
        "Integrate winget distribution into your existing workflow",
    ),
    "a name never ends on the verb its object would follow": (
        "Update the dictionary `available_engine_functions` to use underscores instead of "
        "hyphens in keys.",
        None,
        "Update dictionary available_engine_functions",
    ),
    "a file's extension alone names nothing": (
        "The problem was that the winget manifest was looking for `BlastMerge.ConsoleApp.exe`, "
        "but the actual executable is named differently.",
        None,
        "The winget manifest was looking",
    ),
    "a purpose after the choice goes": (
        "use a mock filesystem for tests so we can run them in parallel.",
        None,
        "use a mock filesystem for tests",
    ),
    # Read the same as before: a noun "use", a place named, a version that is the point, a
    # comma inside brackets, an ordinary "on which is".
    "a noun 'use' ends a name": ("Reduced memory use.", None, "Reduced memory use"),
    "a version in brackets that is the point stays": (
        "Pin node (v18) in CI.",
        None,
        "Pin node v18 in CI",
    ),
    "a contrast whose comma is inside brackets stays whole": (
        "Instead of calling fetch(url, opts), use the shared client wrapper everywhere.",
        None,
        "Instead of calling fetch url opts use shared",
    ),
    "an ordinary relative clause stays": (
        "It depends on which is faster for a given input size.",
        None,
        "It depends on which is faster for given",
    ),
    "a Chinese setting that names a place stays": (
        "在Windows上，路径分隔符不同导致测试失败。",
        None,
        "在Windows上，路径分隔符不同导致测试失败",
    ),
    "a Chinese setting before the statement goes": (
        "在项目中，爬虫的管理采用了**策略模式**和**工厂模式**。",
        None,
        "爬虫的管理采用了策略模式和工厂模式",
    ),
    "what a Chinese sentence means, by what it says": (
        "这段话的意思是：你的电脑上没有配置 Git 的“凭据助手”，这意味着 Git 不会自动记住你的密码。",
        None,
        "你的电脑上没有配置 Git 的 凭据助手",
    ),
    "a Chinese announcement of the root cause goes": (
        "我发现了问题的根本原因：**爬虫和Web应用使用的数据库路径完全不同**。",
        None,
        "爬虫和Web应用使用的数据库路径完全不同",
    ),
    "a Chinese announcement before the finding goes": (
        "但是问题在于，我们的数据库管理系统期望的是英文命名的数据库文件。",
        None,
        "我们的数据库管理系统期望的是英文命名的数据库文件",
    ),
    "how a finding was reached goes": (
        "查看了代码后，发现BaseCrawler类中没有定义config属性，我们需要检查manager.py。",
        None,
        "发现BaseCrawler类中没有定义config属性",
    ),
    "a choice directed as a question is named by the choice": (
        "can we please use the CommandLineParser library for cli handling?",
        None,
        "Use the CommandLineParser library for cli handling",
    ),
    "times and links are not what it says": (
        "Deploys need the VPN since 2026-11-30T10:00:01Z; see https://wiki.example.com/vpn.",
        None,
        "Deploys need the VPN",
    ),
    # Seen in real sessions: "Use github com for serializing all of our persistent".
    "a repository's address is named by the repository, not by its host": (
        "please use @https://github.com/ktsu-dev/AppDataStorage for serializing all of our "
        "persistent state across the application.",
        None,
        "Use AppDataStorage for serializing all of our persistent",
    ),
    "a package's address by the package": (
        "use https://pypi.org/project/httpx/ instead of requests",
        None,
        "use httpx instead of requests",
    ),
    "an issue's address by its repository": (
        "the crash is https://github.com/acme/pool-kit/issues/123#issuecomment-9 again",
        None,
        "the crash is pool-kit again",
    ),
    "a branch's address by its repository": (
        "please use https://github.com/acme/pool-kit/tree/develop as the base",
        None,
        "Use pool-kit as the base",
    ),
    "a version's address by its package": (
        "pin https://www.npmjs.com/package/@acme/pool-kit/v/18.2.0 for now",
        None,
        "pin pool-kit for now",
    ),
    "any other address by its host": (
        "read https://docs.python.org/3/library/asyncio.html on task groups",
        None,
        "read docs.python.org on task groups",
    ),
}


@pytest.mark.parametrize("case", DESCRIBED.values(), ids=DESCRIBED.keys())
def test_a_fragment_is_described_in_a_few_words(case):
    summary, title, expected = case
    assert describe(summary, title=title) == expected


def test_nothing_to_say_is_an_empty_description():
    assert describe("...") == ""
    assert describe("", title="`(127.0.0.1:5432)`") == ""


ROUGH = [
    f"npm test fails with {PG_ERROR}",
    "The issue is that while the `num_results` parameter is passed to the engine "
    "constructors, many engines use different parameter names",
    'Why "fetch"? [[x]] #tag ^b | a.b <script> C:\\x\\y.cs: done.',
    "这段话的意思是：你的电脑上没有配置 Git 的“凭据助手”，这意味着 Git 不会自动记住你的密码",
    "除非……notebook 用的模型权重是已加载到内存中的旧版本代码（没有计时逻辑的版本），因为",
    "ends with a dot. ",
    "a" * 300,
    "路径" * 200,
    "   trailing   spaces   and dots...   ",
    '* ? < > | : " / \\',
]


@pytest.mark.parametrize("text", ROUGH)
def test_every_description_is_short_and_makes_a_valid_file_name(text):
    description = describe(text, title=text)
    wide = len(description) + len(re.findall(r"[\u4e00-\u9fff]", description))
    assert len(description.split()) <= MAX_WORDS and wide <= MAX_WIDTH
    name = fragment_name("demo-app", "2026-11-30", description or "note")
    stem = name.removesuffix(".md")
    assert not re.search(r'[<>:"/\\|?*]', name), name
    assert not stem.endswith((".", " ")), name


def test_pipeline_drafts_carry_short_descriptions(ingest):
    failure = [
        prompt("The API tests fail against the local database, can you fix it?"),
        bash_failure("npm test", PG_ERROR),
        edit(f"{ROOT}/src/db/pool.js", "port: 5433", "port: 5432"),
        bash("npm test", "Tests: 12 passed, 12 total"),
        reply("Decided: the API pool uses pgbouncer in transaction mode."),
    ]
    fixed = extract_fragments(*ingest(steps_of("pg", failure)), project="demo-app")
    assert sorted(d.description for d in fixed) == [
        "npm test fails with connect ECONNREFUSED",
        "the API pool uses pgbouncer in transaction mode",
    ]
    english = extract_fragments(*ingest(steps_of("en", ENGLISH_FIX)), project="demo-app")
    assert "npm test fails" in [d.description for d in english]


def test_the_pipeline_names_its_files_by_the_description(memory):
    failure = [
        prompt("The API tests fail against the local database, can you fix it?"),
        bash_failure("npm test", PG_ERROR),
        edit(f"{ROOT}/src/db/pool.js", "port: 5433", "port: 5432"),
        bash("npm test", "Tests: 12 passed, 12 total"),
    ]
    memory.observe_many(steps_of("pg", failure))
    (written,) = memory.pipeline.extract_session("pg")
    assert (
        written.path.name == "demo-app - 2026-11-30 - npm test fails with connect ECONNREFUSED.md"
    )


@pytest.mark.parametrize("unit", ["a.", "a-", "a/", "0x", "lines 1-", " at f (", "路径"])
def test_a_hostile_log_line_is_described_quickly(unit):
    started = time.perf_counter()
    describe(unit * 50_000, title=unit * 50_000)
    assert time.perf_counter() - started < 1.0
