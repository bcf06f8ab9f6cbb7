"""The extractive session summary, on recorded conversations ingested the real way."""

from __future__ import annotations

import pytest

from memvault.derive.activity import steps
from memvault.derive.summarize import Summary, has_real_work, snapshot_sections, summarize
from memvault.vault import snapshot
from tests.pipeline import transcripts
from tests.pipeline.sessions import (
    CHINESE,
    ENGLISH_FIX,
    GREETING,
    ROOT,
    ROUTINE,
    bash,
    bash_failure,
    conversation,
    edit,
    prompt,
    read,
    reply,
)

CURSOR_CWD = "/Users/dev/code/demo-app"


def cursor_session(fixtures):
    (path,) = fixtures.glob("cursor/transcripts/projects/*/agent-transcripts/*/*.jsonl")
    return transcripts.cursor(path, cwd=CURSOR_CWD)


def test_claude_code_transcript_reads_as_its_tasks_and_tools(ingest, fixtures):
    summary = summarize(
        *ingest(transcripts.claude_code(fixtures / "claude-code/transcripts/tool_heavy.jsonl"))
    )

    assert summary.topic == "start phoenix in background"
    assert summary.current_context.startswith("scrolling back in xterm.js still does not work")
    assert "Progress: looked up “xterm.js scroll not working" in summary.current_context
    assert summary.files == ["assets/js/app.js"]
    assert summary.edited_files == []
    assert summary.commands[0] == "mix phx.server"
    assert summary.open_questions == [
        "scrolling back in xterm.js still does not work (maybe because outer web catches it)?"
    ]
    assert summary.decisions == []
    assert {"phoenix", "xterm.js"} <= set(summary.keywords)
    assert 3 <= len(summary.keywords) <= 8
    assert summary.observation_count == 9


def test_cursor_transcript_in_english_then_chinese(ingest, fixtures):
    summary = summarize(*ingest(cursor_session(fixtures)))

    assert summary.topic == "rename getUser to fetchUser in src/api.ts and run the tests"
    assert summary.current_context == (
        "把这个决定记到笔记里：API 命名统一用 fetch 前缀。"
        "结果：已记录：API 命名统一使用 `fetch` 前缀。"
    )
    assert summary.decisions == ["API 命名统一用 fetch 前缀"]
    assert summary.files == ["src/api.ts"]
    assert summary.edited_files == ["src/api.ts"]
    assert summary.commands == ["npm test"]
    assert {"getUser", "fetchUser", "命名", "前缀"} <= set(summary.keywords)
    assert has_real_work(summary)


def test_chinese_session(ingest):
    summary = summarize(*ingest(conversation("zh", CHINESE)))

    assert summary.topic == "部署脚本在 CI 上一直失败，帮我看看 scripts/deploy.sh 是怎么回事"
    assert summary.current_context.startswith("顺便查一下 GitHub Actions 的 Linux runner")
    assert "结果：GitHub Actions 的 Linux 2 核 runner 价格是每分钟 0.008 美元" in (
        summary.current_context
    )
    assert summary.decisions == ["我们决定改用 scp 上传构建产物，而不是在镜像里额外安装 rsync"]
    assert summary.files == ["scripts/deploy.sh"]
    assert summary.open_questions == ["要不要把 staging 环境也改成 scp？"]
    assert summary.next_actions == ["下一步：删除 .github/workflows/deploy.yml 里安装 rsync 的步骤"]
    assert summary.commands == ["bash scripts/deploy.sh (failed)", "bash scripts/deploy.sh"]
    assert {"部署", "脚本", "deploy.sh", "scp"} <= set(summary.keywords)
    assert has_real_work(summary)


def test_a_command_that_still_fails_is_the_next_action(ingest):
    events = conversation("broken", [prompt("run the tests"), bash_failure("npm test", "exit 1")])
    summary = summarize(*ingest(events))

    assert summary.next_actions == ["Fix failing `npm test`: exit 1"]
    assert summary.current_context == "run the tests. Progress: ran `npm test` (failed)."


@pytest.mark.parametrize("name", ["chinese", "english", "cursor", "claude-code"])
def test_incremental_summary_matches_the_one_shot_summary(ingest, fixtures, name):
    envelopes = {
        "chinese": lambda: conversation("zh", CHINESE),
        "english": lambda: conversation("en", ENGLISH_FIX),
        "cursor": lambda: cursor_session(fixtures),
        "claude-code": lambda: transcripts.claude_code(
            fixtures / "claude-code/transcripts/tool_heavy.jsonl"
        ),
    }[name]()
    events, observations = ingest(envelopes)
    whole = summarize(events, observations)
    # Summaries run at turn boundaries: a new prompt, or the agent's reply.
    boundaries = {i for i, e in enumerate(events) if e.hook_type == "prompt_submit"}
    boundaries |= {i + 1 for i, e in enumerate(events) if e.hook_type == "assistant_response"}
    cuts = sorted(boundaries & set(range(1, len(events))))
    assert len(cuts) >= 2
    for cut in cuts:
        first = summarize(events[:cut], observations[:cut])
        merged = summarize(events[cut:], observations[cut:], previous=first)
        assert _without_keywords(merged) == _without_keywords(whole), f"split at {cut}"
        assert len(set(merged.keywords) & set(whole.keywords)) >= len(whole.keywords) // 2


def _without_keywords(summary: Summary) -> dict:
    fields = dict(summary.__dict__)
    fields.pop("keywords")
    return fields


def test_a_later_pass_clears_the_fix_failing_action(ingest):
    events, observations = ingest(
        conversation(
            "retry",
            [
                prompt("run the tests"),
                bash_failure("npm test", "exit 1"),
                bash("npm install", "added 3 packages"),
                bash("npm test", "12 passed"),
            ],
        )
    )
    first = summarize(events[:2], observations[:2])
    assert first.next_actions == ["Fix failing `npm test`: exit 1"]

    merged = summarize(events[2:], observations[2:], previous=first)

    assert merged.next_actions == []
    assert merged.commands == ["npm test (failed)", "npm install", "npm test"]


def test_topic_is_kept_unless_it_is_a_placeholder(ingest):
    events, observations = ingest(conversation("en", ENGLISH_FIX))
    placeholder = Summary("未設定", "", [], [], [], [], [], 0)
    named = Summary("Login flow", "", [], [], [], [], [], 0)

    assert summarize(events, observations, placeholder).topic == (
        "The login test is failing, can you fix it"
    )
    assert summarize(events, observations, named).topic == "Login flow"


def test_a_fix_in_chat_request_is_about_the_failure_it_quotes(ingest):
    """Cursor's "Fix in Chat" opens every such request with the same words; what the
    session is about is the message it quotes."""
    envelopes = conversation(
        "fix-in-chat",
        [
            prompt(
                "For the code present, we get this error:\n```\nMethod has 8 parameters, "
                "which is greater than the 7 authorized.\n```\nHow can I resolve this?"
            ),
            reply("The method now takes one options object, so it has 2 parameters."),
        ],
    )
    summary = summarize(*ingest(envelopes))

    assert summary.topic == "Method has 8 parameters, which is greater than the 7…"
    assert summary.current_context.startswith(
        "Method has 8 parameters, which is greater than the 7 authorized."
    )


def test_a_reply_that_only_exclaims_is_no_result(ingest):
    """ "Perfect!" closes many an agent's turn: the result is what it said before."""
    envelopes = conversation(
        "filler",
        [
            prompt("The importer drops rows without an id, can you fix it?"),
            reply("Rows without an id now get a generated one before the batch insert."),
            bash("pytest tests/test_importer.py", "12 passed"),
            reply("Perfect! You're absolutely right!"),
        ],
    )
    summary = summarize(*ingest(envelopes))

    assert summary.current_context.endswith(
        "Result: Rows without an id now get a generated one before the batch insert."
    )


@pytest.mark.parametrize(
    ("said", "result"),
    [
        (
            "Perfect! The error has been resolved by:\n\n1. **Grouping the callbacks** into"
            " one record\n2. Cutting the signature to 5 parameters",
            "The error has been resolved by: **Grouping the callbacks** into one record.",
        ),
        ("问题已解决：\n\n- 给导入器加了默认 id\n- 补了测试", "问题已解决：给导入器加了默认 id."),
        # the list's first item, even one that tells what the agent is about to do
        (
            "我发现以下几个问题，让我们一步步修复：\n\n1. 首先，让我们统一数据库表结构。"
            "我会创建迁移文件：",
            "我发现以下几个问题，让我们一步步修复：首先，让我们统一数据库表结构。",
        ),
        # no list after it: the next paragraph is not what it introduced
        (
            "Let's modify the FileDiffer class first:\n```cs\nclass A {}\n```\nLet me try"
            " again with a more focused approach.",
            "Let's modify the FileDiffer class first.",
        ),
    ],
)
def test_a_result_that_introduces_a_list_says_its_first_item(ingest, said, result):
    """An agent's last word that only introduces what follows ("resolved by:") says nothing
    alone: the result carries the first thing it introduces."""
    envelopes = conversation(
        "listed",
        [
            prompt("Method has 8 parameters, which is greater than the 7 authorized."),
            edit(f"{ROOT}/src/merge.cs", "a", "b"),
            reply(said),
        ],
    )
    assert summarize(*ingest(envelopes)).current_context.endswith(f"Result: {result}")


def test_greeting_only_session_has_no_real_work(ingest):
    summary = summarize(*ingest(conversation("hello", GREETING)))

    assert not has_real_work(summary)
    assert summary.topic == ""
    assert summary.current_context == ""
    assert summary.keywords == []


def test_reads_and_listings_are_not_real_work(ingest):
    summary = summarize(*ingest(conversation("look", ROUTINE)))

    assert not has_real_work(summary)
    assert summary.files == ["src/api.ts"]
    assert summary.commands == ["ls src"]


def test_tool_calls_the_user_rejected_are_not_real_work(ingest, fixtures):
    summary = summarize(
        *ingest(transcripts.claude_code(fixtures / "claude-code/transcripts/short.jsonl"))
    )

    assert not has_real_work(summary)
    assert summary.topic == "mix phx.server doesnt seem to start"
    assert summary.commands == []
    assert summary.next_actions == []


def test_snapshot_sections_merge_into_a_snapshot(ingest):
    summary = summarize(*ingest(conversation("zh", CHINESE)))
    sections = snapshot_sections(summary)

    assert set(sections) <= set(snapshot.SECTIONS)
    merged = snapshot.merge(snapshot.Snapshot(), snapshot.as_snapshot(sections))
    assert merged.items(snapshot.DECISIONS) == summary.decisions
    assert merged.items(snapshot.FILES) == ["scripts/deploy.sh"]
    assert merged.items(snapshot.QUESTIONS) == summary.open_questions
    assert snapshot.summary_of(merged) == summary.current_context
    assert "## Next Actions\n\n- 下一步：" in merged.render(
        "2026-11-30-0900-claude-code-main-agent"
    )


def test_observations_alone_are_enough(ingest):
    events, observations = ingest(conversation("zh", CHINESE))
    alone = summarize([], observations)
    whole = summarize(events, observations)

    assert alone.topic == whole.topic
    assert alone.decisions == whole.decisions
    # Without the event there is no session folder to make paths relative to.
    assert alone.files == ["/home/dev/code/demo-app/scripts/deploy.sh"]


def test_files_a_shell_command_writes_are_the_sessions_files(ingest):
    events = conversation(
        "shell",
        [
            prompt("write a note and set up the package"),
            bash("echo hello > note.txt", ""),
            bash("mkdir -p src/pkg && touch src/pkg/__init__.py", ""),
            bash("git mv old.md docs/new.md", ""),
            bash("npm test > /dev/null 2>&1", "3 passed"),
        ],
    )
    summary = summarize(*ingest(events))
    written = ["note.txt", "src/pkg", "src/pkg/__init__.py", "docs/new.md"]
    assert [f for f in summary.files if f in written] == written
    sections = snapshot_sections(summary)
    merged = snapshot.merge(snapshot.Snapshot(), snapshot.as_snapshot(sections))
    assert "note.txt" in merged.items(snapshot.FILES)


def test_the_hosts_own_tools_are_not_work_the_session_did(ingest):
    def host_tool(name: str) -> tuple[str, dict]:
        return "post_tool_use", {"tool_name": name, "tool_input": {"query": "select:Read"}}

    events = conversation(
        "internal",
        [prompt("hi"), host_tool("ToolSearch"), host_tool("WaitForMcpServers")],
    )
    observed = ingest(events)
    assert [step.role for step in steps(*observed)] == ["prompt"]
    assert {o.type for o in observed[1]} == {"conversation", "host_internal"}
    summary = summarize(*observed)
    assert not has_real_work(summary)
    assert "ToolSearch" not in summary.current_context
    assert summary.commands == [] and summary.files == []


@pytest.mark.parametrize(
    "said",
    [
        "The importer is fixed. Would you like me to run the other test suites as well?",
        "All green now. What would you like to do next?",
        "Or would you like me to explain any part of the fix in more detail?",
        "Done. Let me know if you want the changes explained.",
        "修复完成。您需要我帮您进行哪些具体的改进或检查吗？",
        "让我们检查一下日志文件，看看重复日志问题是否已修复：",
        "我们需要关注 `_extract_links` 的逻辑，看看是否有导致无法提取到链接的情况。",
        "What was moved:\n- the parser\n- its tests",
        "不同的推理路径反映了模型对场景的不确定性。",
    ],
)
def test_an_offer_narration_or_a_heading_is_no_open_question(ingest, said):
    """What a session leaves open is a question someone asked and nobody answered, not the
    agent offering more, saying what it will check, or heading a list."""
    envelopes = conversation(
        "offer", [prompt("The importer drops rows, can you fix it?"), reply(said)]
    )
    assert summarize(*ingest(envelopes)).open_questions == []


def test_a_question_the_agent_leaves_to_the_user_stays_open(ingest):
    envelopes = conversation(
        "asks",
        [
            prompt("The importer drops rows, can you fix it?"),
            reply("Fixed the batch size. Should the importer skip rows without an id or fail?"),
        ],
    )
    assert summarize(*ingest(envelopes)).open_questions == [
        "Should the importer skip rows without an id or fail?"
    ]


# A history exported without its edits (Cursor's export keeps the agent's reads only): the
# reply says what the turn changed.
EXPORTED = [
    prompt("Make the temp folder helper safe to call from parallel tests"),
    read(f"{ROOT}/src/core/temp_helper.py"),
    read(f"{ROOT}/tests/test_temp.py"),
    reply(
        "### Changes\n1. Updated `src/core/temp_helper.py` to use a random folder name.\n"
        "2. Added a retry to tests/test_temp.py.\nThe other tests were not changed."
    ),
]


EXPORTED_LATER = [
    prompt("Now move the folder naming into its own module"),
    read(f"{ROOT}/src/core/paths.py"),
    reply("I created `src/core/paths.py` with `random_folder()` and updated the helper."),
]


def test_an_exported_sessions_reported_changes_are_its_edited_files(ingest):
    summary = summarize(*ingest(conversation("exported", EXPORTED)))

    assert summary.edited_files == ["src/core/temp_helper.py", "tests/test_temp.py"]
    assert summary.files[:2] == summary.edited_files
    assert summary.records_changes is False
    assert has_real_work(summary)  # its board row is not left idle


def test_a_session_that_records_its_edits_is_not_read_for_reports(ingest):
    recorded = [*EXPORTED[:3], edit(f"{ROOT}/docs/notes.md", "a", "b"), EXPORTED[3]]
    summary = summarize(*ingest(conversation("live", recorded)))

    assert summary.edited_files == ["docs/notes.md"]
    assert summary.records_changes is True


def test_a_failed_edit_is_a_record_too(ingest):
    failed = (
        "post_tool_failure",
        {
            "tool_name": "Edit",
            "tool_input": {"file_path": f"{ROOT}/src/core/temp_helper.py"},
            "error": "old_string not found",
        },
    )
    summary = summarize(*ingest(conversation("failed", [*EXPORTED[:3], failed, EXPORTED[3]])))

    assert summary.edited_files == []
    assert not has_real_work(summary)


def test_a_later_turn_of_a_session_that_recorded_edits_is_not_read_for_reports(ingest):
    events, observations = ingest(
        conversation("later", [prompt("tidy the notes"), edit(f"{ROOT}/docs/notes.md", "a", "b")])
    )
    first = summarize(events, observations)
    more, more_observations = ingest(conversation("later-2", EXPORTED))

    merged = summarize(more, more_observations, previous=first)

    assert merged.edited_files == ["docs/notes.md"]
    # A summary stored before the flag was kept: its edited files were recorded ones.
    older = Summary(**{**first.__dict__, "records_changes": None})
    assert summarize(more, more_observations, previous=older).edited_files == ["docs/notes.md"]


def test_an_exported_session_split_in_runs_reads_every_runs_reports(ingest):
    events, observations = ingest(conversation("split", [*EXPORTED, *EXPORTED_LATER]))
    whole = summarize(events, observations)
    cut = len(EXPORTED)
    first = summarize(events[:cut], observations[:cut])

    merged = summarize(events[cut:], observations[cut:], previous=first)

    assert merged.edited_files == whole.edited_files
    assert "src/core/paths.py" in merged.edited_files


def test_a_claim_before_the_sessions_first_edit_goes_once_it_records_edits(ingest):
    # A live session: its first run only reads, and a reply reads as a change made; its
    # next run records an edit. It is read by its records alone, as it is summarized whole.
    steps = [*EXPORTED, prompt("now tidy the notes"), edit(f"{ROOT}/docs/notes.md", "a", "b")]
    events, observations = ingest(conversation("claim", steps))
    whole = summarize(events, observations)
    cut = len(EXPORTED)
    first = summarize(events[:cut], observations[:cut])
    assert first.edited_files  # read as reported, while nothing was recorded

    merged = summarize(events[cut:], observations[cut:], previous=first)

    assert merged.edited_files == whole.edited_files == ["docs/notes.md"]
    assert merged.records_changes is True


def test_a_later_run_knows_the_paths_earlier_runs_read(ingest):
    steps = [
        prompt("Look at the temp folder helper"),
        read(f"{ROOT}/src/core/temp_helper.py"),
        reply("It builds the folder name from the clock."),
        prompt("Make it safe for parallel tests"),
        reply("### Changes\n- Updated temp_helper.py to use a random folder name."),
    ]
    events, observations = ingest(conversation("bare", steps))
    whole = summarize(events, observations)
    first = summarize(events[:3], observations[:3])

    merged = summarize(events[3:], observations[3:], previous=first)

    assert merged.edited_files == whole.edited_files == ["src/core/temp_helper.py"]


def test_a_session_that_only_reads_and_tells_of_past_changes_stays_idle(ingest):
    steps = [
        prompt("Why is the login test flaky?"),
        read(f"{ROOT}/src/auth/session.py"),
        read(f"{ROOT}/tests/test_login.py"),
        reply(
            "The timeout was added in `src/auth/session.py` last month when the retry loop "
            "was refactored. If you updated tests/test_login.py since, run it again."
        ),
    ]
    summary = summarize(*ingest(conversation("reads", steps)))

    assert summary.edited_files == []
    assert not has_real_work(summary)
