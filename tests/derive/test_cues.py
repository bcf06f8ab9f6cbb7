"""Cue phrases in English and Chinese."""

from __future__ import annotations

import pytest

from memvault.derive import cues, quoted


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
        "We made the decision to drop Python 3.9 support.",
        "I see no reason to keep it: use the pool instead of a new connection per request.",
        # words that decide nothing beside the words that decide
        "Since I got timeouts with requests, we switched to httpx instead of requests.",
        "To avoid accidentally committing secrets, we decided to load them from env instead.",
        "I see, so let's use a lock instead of a flag.",
        "We need to make a decision about caching: we'll use Redis.",
        # a contrast in a sentence that chooses: commits, directs, prefers, recommends
        "I'll integrate the release into the existing workflow rather than creating one.",
        "Rather than replacing the custom diffing completely, I recommend a hybrid approach.",
        "The properties should be initialized to empty collections instead of null.",
        "instead of that, lets make unchanged characters dim gray",
        "implement a navigation stack so that we go back to where we were instead of the menu",
        "由于没有安装 pip，所以必须用 uv pip list 而不是 pip list。",
        "The session layer now keeps its sessions in Postgres instead of Redis.",
        "I\u2019ll keep the pool open rather than reconnecting per request.",
        "我们弃用 requests，改用 httpx。",
        "超时时间定为 30 秒。",
        "需要决定用哪个库，最后决定用 httpx。",  # decided after all
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
        # what someone got instead of what they expected, a fault, a decision to be made
        "okay now when I run the merge I get an unhelpful error instead of a summary:",
        "And I got a search over ALL ENGINES rather than just -e brave",
        "`FileFinder.FindFiles` is incorrectly called with four arguments instead of two.",
        "I just want context about the change so I can make a decision about which to take",
        "I need that information to make an informed decision with the prompts:",
        "@eastmoney.py 为什么要统一使用一样的连接呢",
        # a contrast said of what code does: a behaviour or a fault described, no choice
        "PowerShell returns `$null` instead of an empty array when the pipeline yields nothing.",
        "The test fails because `CalculateFileSimilarity` reads real files instead of the mock.",
        "This suggests that the diff algorithm is generating deletions instead of modifications.",
        "The handler takes the callbacks instead of five separate parameters.",
        "This imports the `datetime` class instead of the module, so `datetime.now()` works.",
        "The upload now fails with a 413 instead of retrying.",
        "运行测试时，Python 会在项目根目录中查找 app 包，而不是在其父目录中查找。",
        "在 Dart Sass 1.45.0 中，它被一个新的现代 API 所取代。",  # a pasted notice
        "遗留的 JS API 现已弃用，并将在 Dart Sass 2.0.0 中删除。",
        "让我继续修复 design-system.scss 文件中的弃用警告",  # a deprecation warning
        # 定为 inside another word: 判定为 (judged as), 确定为什么 (find out why)
        "这条新闻被错误地判定为广告。",
        "我需要检查日志配置，以确定为什么没有输出。",
        # a decision still to be made, or what code decides
        "现在有两个配置文件，需要决定保留哪一个。",
        "它会根据 mode 参数决定读取缓存还是数据库。",
        # "decision" naming a kind of thing
        "Add decision audit trails to the planner.",
        "The decision-making step runs after the scan.",
        # what the agent needs to look at next
        "I need to find where the CLI reads the token instead of the config value.",
        "Now that I understand the flow, I need to look at the retry handler instead of guessing.",
        # a choice of "the same way": nothing named
        "如果其他页面也有同样的问题，可以采用类似的方式处理。",
    ],
)
def test_not_decisions(sentence):
    assert not cues.is_decision(sentence) or cues.is_narration(sentence)


# Seen in real sessions' prompts: choices the user directs in plain words, no "instead".
DIRECTIVES = [
    "use fnv1a hashes",
    "please use @https://github.com/ktsu-dev/AppDataStorage for serializing all of our state",
    "use a mock filesystem so that tests can run in parallel",
    "dont use a winget specific staging directory either",
    'USE "uv pip"!',
    "I dont want another configuration file, I would rather infer it from the environment",
    "I always want to run sonar not just on releases",
    "使用中文回答",
    "使用Vue 3 + Naive UI 的现代化前端，去掉静态界面",
    "不要再用 requests",
    # and as people write them otherwise
    "用中文回答",
    "请用 pnpm 安装依赖",
    "use anyhow for error handling",  # a failure's words, no failure told
    "使用 sentry 做错误监控",
    "use a queue so requests won't block",
    "dont use requests, it cannot do http2",
    "Don\u2019t use mocks here",
    "@src/api.ts use zod for validation",
    "**use pnpm**",
    "pls use pnpm",
    # in the first person
    "I want to use httpx for all outgoing requests",
    "we should use SQLite for the cache",
    "I’d like to use Tailwind for styling",
    "I think we should migrate to uv",
    "lets use zod for validation",
    "Let's not use a global config object",
    "make sure to use async/await everywhere",
    "I prefer composition over inheritance here",
]


@pytest.mark.parametrize("sentence", DIRECTIVES)
def test_a_plain_directive_decides_at_a_prompts_opening_only(sentence):
    """Said by the user at a prompt's opening, a plain directive is a decision; the same
    words elsewhere (an agent's "Use the command below", a pasted document's "Use this flag
    to …") are not, and nothing the cues took before changes."""
    assert cues.is_decision(sentence, opening=True)
    assert not cues.is_decision(sentence)


def test_a_prompts_opening_is_its_own_words_first_sentences():
    """Every reader of a prompt (fragments, summary, digest, graph) asks of the same
    sentences, whatever it reads the prompt's sentences from: quoted lines are not the
    user's, and a pasted document's tenth sentence is no opening."""
    quoted = "> The build takes long.\n> It uses npm.\n> We ship daily.\n\nuse pnpm for installs"
    assert "use pnpm for installs" in cues.openers(quoted)
    pasted = " ".join(f"Step {n} is here." for n in range(9)) + " Use the --interactive flag."
    assert len(cues.openers(pasted)) == cues.DIRECTED_SENTENCES
    assert "Use the --interactive flag." not in cues.openers(pasted)
    assert cues.openers("/compact use pnpm") == frozenset()  # a slash command, no task


@pytest.mark.parametrize(
    "sentence",
    [
        "use this workspace to make a dotnet application that hashes files",  # points at
        "don't use that",
        "stop using this",
        "Use the command below to reproduce",  # a tool for one task
        "Use the Done button to close the dialog.",
        "use templates to create marketing, project_plan, technical_spec",
        "use redis?",  # asks
        "Should we use Postgres?",
        "Use of unassigned local variable 'total'",  # a noun, pasted from a compiler
        "use after free in buffer.c",
        "使用过程中发现页面卡顿，帮我看看",
        "使用者反馈登录慢",
        "使用率一直是100%",
        "使用说明",
        "用户登录失败",
        "I would rather you explain the plan first",  # asks the agent
        "使用python run.py crawler 指令日志就无法输出到指定文件请产看相关文件并修复",  # a failure
        "use the retry helper, the upload still fails with a timeout",
        "We decided earlier to use httpx.",  # recalled
        "I use vim",  # says what the user does, directs nothing
        "I want to use the debugger to find the leak",  # a tool for one task
        "we should use it everywhere",  # points at
        "I want to use Redis but the connection still fails with a timeout",  # a failure
        "Should I prefer Redis here?",
        "Use your Personal Access Token",  # points at the reader's own
        "use the best approach for this",  # names no choice
        "使用最优解",
    ],
)
def test_what_only_looks_like_a_directive(sentence):
    assert not cues.is_decision(sentence, opening=True)


@pytest.mark.parametrize(
    "sentence", ["Is the cache still needed?", "是否需要保留缓存", "要不要加索引", "这样可以吗"]
)
def test_questions(sentence):
    assert cues.is_question(sentence)


def test_a_statement_ending_in_ne_is_no_question():
    assert not cues.is_question("接下来还要更新文档呢。")
    assert cues.is_next_step("下一步还需要跑迁移呢")


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


@pytest.mark.parametrize(
    ("sentence", "said"),
    [
        (
            "The issue is clear now: there's a version mismatch between the two packages.",
            "There's a version mismatch between the two packages",
        ),
        ("I see the problem, the pool is never closed.", "The pool is never closed"),
        (
            "我发现了问题，在 `web/__init__.py` 中导入路径写错了。",
            "在 `web/__init__.py` 中导入路径写错了",
        ),
        ("但是问题在于，数据库管理系统期望英文命名的文件。", "数据库管理系统期望英文命名的文件"),
        ("问题的根本原因是：图标在该包中不存在。", "图标在该包中不存在"),
        # Seen in real sessions, each a fragment's name before: "我发现了问题的根本原因",
        # "发现另一个问题".
        (
            "我发现了问题的根本原因：**爬虫和Web应用使用的数据库路径完全不同**。",
            "**爬虫和Web应用使用的数据库路径完全不同**",
        ),
        ("发现另一个问题，routes.py还导入了app模块中的内容。", "Routes.py还导入了app模块中的内容"),
        # What names the finding stays: "问题在于" followed by the finding itself.
        (
            "问题在于原代码将 db_path 作为位置参数传递。",
            "问题在于原代码将 db_path 作为位置参数传递",
        ),
    ],
)
def test_statement_drops_the_announcement_before_a_finding(sentence, said):
    assert cues.statement(sentence) == said
    assert not cues.says_nothing(cues.statement(sentence))


@pytest.mark.parametrize(
    "statement",
    [
        "The issue is clear now",
        "The bug is now fixed",
        "I found the issue!",
        "我发现了问题！",
        "现在，我发现问题了。",
        "现在问题的根因完全清楚了",
        "我发现了一个重要问题！",
        "问题根因。",
        "The issue is on lines 27-30",
        "I can see the issue is on line 225",
        "✅ 发现的问题。",  # a check mark before it
    ],
)
def test_an_announcement_says_nothing(statement):
    assert cues.says_nothing(cues.statement(statement))


@pytest.mark.parametrize(
    "statement",
    [
        "The issue is that if we reach line 153, it means:",
        "基于以上发现，我将对 `test_ifeng_crawler.py` 进行以下修改：",
        "**Root Cause:**.",
        "Here is what changed:",
    ],
)
def test_a_lead_in_to_what_follows_introduces_it(statement):
    assert cues.introduces(statement)
    assert not cues.introduces("The pool is never closed.")


def test_narration_may_open_with_now_or_ok():
    assert cues.is_narration("Now let me check what the issue is with line 1037:")
    assert cues.is_narration("OK, let me read the config first.")
    assert not cues.is_narration("Now the pool is closed after each request.")
    assert cues.is_narration("首先让我检查前端的当前状态：")
    assert cues.is_narration("现在让我们再次测试爬虫：")
    assert cues.is_narration("好的，我来修复这个问题")
    assert not cues.is_narration("现在爬虫可以正常保存新闻了。")


@pytest.mark.parametrize(
    "sentence",
    [
        "Perfect!",
        "Great!",
        "Excellent!",
        "You're absolutely right!",
        "Great catch!",
        "找到了！",
        "Got it.",
        "I can see the issue!",
        "完美！",
        "太好了！",
        "您说得对。",
        "🎉 Perfect!",
    ],
)
def test_a_bare_exclamation_or_agreement_is_filler(sentence):
    assert cues.is_filler(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "Perfect! The build passes.",
        "Good news: the tests pass.",
        "Right now the cache is cold.",
        "The pool is never closed.",
        "构建通过了。",
        "✅ All scripts verified with the new paths.",
    ],
)
def test_a_sentence_that_says_something_is_no_filler(sentence):
    assert not cues.is_filler(sentence)


FIX_IN_CHAT = (
    "For the code present, we get this error:\n```\n"
    "Method has 8 parameters, which is greater than the 7 authorized.\n```\n"
    "How can I resolve this? If you propose a fix, please make it concise."
)


@pytest.mark.parametrize(
    ("prompt", "opening"),
    [
        (FIX_IN_CHAT, "Method has 8 parameters, which is greater than the 7 authorized."),
        (
            "I get the following error:\n```\nTraceback (most recent call "
            'last):\n  File "a.py", line 3, in <module>\n    load()\n'
            "KeyError: 'user'\n```\nfix it",
            "KeyError: 'user'.",
        ),
        (
            "运行时报错：\n```\nModuleNotFoundError: No module named 'yaml'\n```\n怎么办",
            "ModuleNotFoundError: No module named 'yaml'.",
        ),
        # a shell prompt or a rule is no message; a traceback is told by its last line
        (
            "For the code present, we get this error:\n```\n$ npm run build\n"
            "Error: Cannot find module 'vite'\n```",
            "Error: Cannot find module 'vite'.",
        ),
        (
            "I get this error:\n```console\n(venv) $ python app.py\nTraceback (most recent "
            'call last):\n  File "app.py", line 3\nKeyError: 1\n```',
            "KeyError: 1.",
        ),
        # Said of the run that failed: still only an introduction.
        (
            "When I run the tests I get this error:\n```\nFAILED tests/test_api.py::test_login"
            " - KeyError: 'id'\n```",
            "FAILED tests/test_api.py::test_login - KeyError: 'id'.",
        ),
        (
            "when building I get this error:\n```\nerror CS0246: The type 'Foo' could not be "
            "found\n```",
            "error CS0246: The type 'Foo' could not be found.",
        ),
        # Output pasted with no words before it: its first failure, without the log's
        # time, level and place.
        (
            ">>> bing_anyws\n[02/26/25 13:37:29] DEBUG    Using selector: KqueueSelector     "
            "  selector_events.py:64\n                    ERROR    Search with engine 'bing'"
            " failed: no attribute 'name'           api.py:158\nNo results found!",
            "Search with engine 'bing' failed: no attribute 'name'.",
        ),
        (
            "PS C:\\dev\\BlastMerge> dotnet test\nRestore complete (0.6s)\n  BlastMerge.Test "
            "test failed with 33 error(s) (3.7s)\n",
            "BlastMerge.Test test failed with 33 error(s).",
        ),
        # A build tool's output pasted alone: its first line is a step timed at its end.
        (
            "Restore complete (0.6s)\n  BlastMerge.Core succeeded (0.5s) → BlastMerge.Core\\bin"
            "\\ktsu.BlastMerge.Core.dll\n  BlastMerge.Test test failed with 2 error(s) (1.1s)\n"
            "    C:\\dev\\BlastMerge.Test\\FileFinderTests.cs(42): error test failed: Finds_All",
            "BlastMerge.Test test failed with 2 error(s).",
        ),
        (
            '$ python app.py\nTraceback (most recent call last):\n  File "app.py", line 3, in'
            " <module>\n    import foo\nModuleNotFoundError: No module named 'foo'",
            "ModuleNotFoundError: No module named 'foo'.",
        ),
        (
            "2025-06-15 20:06:18,237 [ERROR] [backend.web.routes] 请求处理出错: __init__() got "
            "an unexpected keyword argument 'db_path'",
            "请求处理出错: __init__() got an unexpected keyword argument 'db_path'.",
        ),
    ],
)
def test_a_request_that_only_introduces_a_quoted_failure_leads_with_it(prompt, opening):
    assert cues.sentences(quoted.lead(prompt))[0] == opening


@pytest.mark.parametrize(
    "prompt",
    [
        "Here is my code:\n```python\ndef load(): pass\n```\nwhat does it do?",
        "Fix the error in parser.py: it drops rows",
        "The importer drops rows, can you fix it?",
        # an opening that asks for something, code quoted, a message that is no sentence
        "Add retry to the uploader because S3 returns this error:\n```\nSlowDown\n```",
        "I have a problem with this function:\n```python\ndef parse(rows): pass\n```",
        "The health check fails with this error:\n```\n503\n```",
        "We get this error:\n```\n503\n```",
        "When I run the tests, fix this error:\n```\nKeyError: 'id'\n```",
        # output that names no failure
        "[02/26/25 23:43:57] DEBUG    Overriding num_results=5 with n=2     config.py:12\nok",
        "PS C:\\app> dotnet test\nTest summary: total: 213, failed: 0, succeeded: 213",
        "Restore complete (0.6s)\n  BlastMerge.Core succeeded (0.5s) → bin\\Core.dll",
        # a sentence that ends with a time
        "The import takes too long (12s)\nCan we cache the parsed rows?",
    ],
)
def test_other_requests_lead_with_their_own_words(prompt):
    assert quoted.lead(prompt) == prompt


def test_a_numbered_items_number_is_no_sentence():
    assert cues.sentences("Resolved by:\n1. Generating an id.\n2) Checking it.") == [
        "Resolved by:",
        "Generating an id.",
        "Checking it.",
    ]
