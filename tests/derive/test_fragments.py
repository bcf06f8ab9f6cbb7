"""Fragment extraction: precise drafts from real sessions, every one a valid fragment."""

from __future__ import annotations

import pytest

from memvault.derive.fragments import CONFIRMED, DECLARED, UNCONFIRMED, extract_fragments
from memvault.vault.fragments import Fragment
from memvault.vault.remember import check_draft, remember
from tests.derive.test_summarize import cursor_session
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


def by_tag(drafts, tag):
    return [d for d in drafts if tag in d.tags]


@pytest.mark.parametrize("name", ["greeting", "routine", "short", "tool_heavy"])
def test_routine_sessions_yield_no_fragments(ingest, fixtures, name):
    recorded = fixtures / "claude-code" / "transcripts"
    envelopes = {
        "greeting": lambda: conversation("hello", GREETING),
        "routine": lambda: conversation("look", ROUTINE),
        "short": lambda: transcripts.claude_code(recorded / "short.jsonl"),
        "tool_heavy": lambda: transcripts.claude_code(recorded / "tool_heavy.jsonl"),
    }[name]()

    assert extract_fragments(*ingest(envelopes), project="demo-app") == []


def test_an_error_then_a_fix_is_a_lesson(ingest):
    drafts = extract_fragments(*ingest(conversation("en", ENGLISH_FIX)), project="demo-app")

    (lesson,) = by_tag(drafts, "pitfall")
    assert lesson.summary == (
        "`npm test` failed (Command exited with non-zero status code 1); fixed: edited src/auth.ts."
    )
    assert lesson.facts == [
        "failed: `npm test`",
        "error: Command exited with non-zero status code 1",
        "cause: The test fails because fetchUser returns undefined when the session token has "
        "expired.",
        "fix: edited src/auth.ts",
        "verified: `npm test` passed after the fix",
    ]
    assert lesson.properties == {"events": ["en-1", "en-4", "en-5"]}
    assert lesson.source == "session en"
    assert lesson.date == "2026-11-30"
    assert "lesson" in lesson.tags


def test_a_decision_is_a_decision_fragment(ingest):
    drafts = extract_fragments(*ingest(conversation("en", ENGLISH_FIX)), project="demo-app")

    (decision,) = by_tag(drafts, "decision")
    assert decision.summary == "We'll use the refresh-token flow instead of forcing a new login."
    assert decision.facts == [
        "decision: We'll use the refresh-token flow instead of forcing a new login",
        "task: The login test is failing, can you fix it?",
        "files: src/auth.ts",
    ]
    assert decision.properties == {"events": ["en-3"]}
    assert len(drafts) == 2  # the decision and the lesson; the fix report is neither


def test_a_turn_without_recorded_edits_is_about_the_files_its_report_names(ingest):
    """A history kept without its edits: the agent's report says which files changed, by
    the paths the turn read them by. Where the tools recorded edits, those alone count."""
    said = [
        prompt("The login test is failing, can you fix it?"),
        reply("We'll use the refresh-token flow instead of forcing a new login."),
        read(f"{ROOT}/src/auth.ts"),
        read(f"{ROOT}/src/api.ts"),
        reply("Updated auth.ts: fetchUser refreshes an expired token. api.ts needed nothing."),
    ]
    (reported,) = by_tag(
        extract_fragments(*ingest(conversation("export", said)), project="demo-app"), "decision"
    )
    assert reported.facts[-1] == "files: src/auth.ts"

    edited = [*said[:4], edit(f"{ROOT}/src/api.ts", "a", "b"), said[4]]
    (recorded,) = by_tag(
        extract_fragments(*ingest(conversation("live", edited)), project="demo-app"), "decision"
    )
    assert recorded.facts[-1] == "files: src/api.ts"


def test_a_session_that_records_its_edits_changed_nothing_its_tools_did_not(ingest):
    """A live session records every edit, failed or refused ones too: a turn of it with
    none changed nothing, whatever its replies say or offer."""
    decided = [
        prompt("The login test is failing, can you fix it?"),
        reply("We'll use the refresh-token flow instead of forcing a new login."),
        read(f"{ROOT}/src/auth.ts"),
        reply("Updated auth.ts: fetchUser refreshes an expired token."),
    ]
    later = [prompt("Now make the logout button red."), edit(f"{ROOT}/src/ui.ts", "a", "b")]
    (decision,) = by_tag(
        extract_fragments(*ingest(conversation("read-only", decided + later)), project="demo-app"),
        "decision",
    )
    assert not any(f.startswith("files:") for f in decision.facts)

    failed = (
        "post_tool_failure",
        {
            "tool_name": "Edit",
            "tool_input": {"file_path": f"{ROOT}/src/auth.ts"},
            "error": "String to replace not found in file.",
        },
    )
    (decision,) = by_tag(
        extract_fragments(
            *ingest(conversation("failed", [*decided[:3], failed, decided[3]])), project="demo-app"
        ),
        "decision",
    )
    assert not any(f.startswith("files:") for f in decision.facts)


def test_a_turns_report_gives_the_files_of_that_turn_only(ingest):
    said = [
        prompt("The login test is failing, can you fix it?"),
        reply("We'll use the refresh-token flow instead of forcing a new login."),
        read(f"{ROOT}/src/auth.ts"),
        prompt("Now make the logout button red, please."),
        read(f"{ROOT}/src/ui.ts"),
        reply("Updated ui.ts and auth.ts: the button is red."),
    ]
    (decision,) = by_tag(
        extract_fragments(*ingest(conversation("turns", said)), project="demo-app"), "decision"
    )
    assert not any(f.startswith("files:") for f in decision.facts)


@pytest.mark.parametrize(
    "request_text",
    [
        "can we please use the CommandLineParser library for cli handling?",
        "Could we switch to pnpm for the workspace?",
        "能不能改用 httpx？",
    ],
)
def test_a_choice_directed_as_a_polite_question_is_a_decision(ingest, request_text):
    """The cues take a choice the user directs, worded as a question, for a decision; the
    fragment it states is kept like any other decision's."""
    envelopes = conversation(
        "directed",
        [
            prompt(request_text),
            edit(f"{ROOT}/src/cli.ts", "a", "b"),
            reply("Done: the command line is parsed by it now."),
        ],
    )
    drafts = extract_fragments(*ingest(envelopes), project="demo-app")
    (decision,) = by_tag(drafts, "decision")
    assert decision.summary.rstrip("?？.。") == request_text.rstrip("?？")
    assert decision.facts[-1] == "files: src/cli.ts"


def test_a_choice_the_user_directs_plainly_is_a_decision_held_sure(ingest):
    """Seen in real sessions' prompts: "use fnv1a hashes", no "instead", no question. Said
    by the user at a prompt's opening, it is a decision held as sure as any the user said;
    the same words in an agent's reply, or deep in a pasted document, decide nothing."""
    pasted = " ".join(f"Step {n} is described here." for n in range(6))
    envelopes = conversation(
        "plainly",
        [
            prompt("use fnv1a hashes"),
            edit(f"{ROOT}/src/hasher.ts", "a", "b"),
            reply("Use the command below to run the tests. The hasher is fnv1a now."),
            prompt(f"Here is the tool's manual. {pasted} Use the --interactive flag on any run."),
            reply("Read it."),
        ],
    )
    drafts = extract_fragments(*ingest(envelopes), project="demo-app")
    (decision,) = by_tag(drafts, "decision")
    assert decision.summary == "use fnv1a hashes."
    assert decision.confidence == CONFIRMED
    assert decision.facts[-1] == "files: src/hasher.ts"


def test_a_question_that_directs_nothing_is_no_decision(ingest):
    envelopes = conversation(
        "asks",
        [prompt("Should we use pnpm instead of npm for the workspace?"), reply("It depends.")],
    )
    assert by_tag(extract_fragments(*ingest(envelopes), project="demo-app"), "decision") == []


def test_a_decision_the_user_states_and_the_agent_confirms(ingest, fixtures):
    session = cursor_session(fixtures)
    drafts = extract_fragments(*ingest(session), project="demo-app")

    (decision,) = drafts
    assert decision.summary == "API 命名统一用 fetch 前缀。"
    assert decision.facts == ["decision: API 命名统一用 fetch 前缀"]
    assert decision.confidence == 0.9
    assert decision.importance == 0.8
    assert decision.date == "2026-09-29"
    session_id = session[0]["sessionId"]
    assert decision.properties == {"events": [f"{session_id}:6:0", f"{session_id}:7:0"]}


def test_chinese_session_yields_decision_lesson_and_price(ingest):
    drafts = extract_fragments(*ingest(conversation("zh", CHINESE)), project="demo-app")

    assert [d.tags[0] for d in drafts] == ["decision", "pitfall", "data"]
    decision, lesson, price = drafts
    assert decision.summary == "我们决定改用 scp 上传构建产物，而不是在镜像里额外安装 rsync。"
    assert lesson.summary == (
        "`bash scripts/deploy.sh` 失败（scripts/deploy.sh: line 12: rsync: command not found），"
        "修改 scripts/deploy.sh 后通过。"
    )
    assert "cause: 原因是 CI 镜像里没有安装 rsync，脚本第 12 行直接调用了它。" in lesson.facts
    assert price.facts == [
        "data: GitHub Actions 的 Linux 2 核 runner 价格是每分钟 0.008 美元，公开仓库免费"
    ]


def test_a_failure_nobody_fixed_is_not_a_lesson(ingest):
    events = conversation("open", [prompt("deploy it"), bash_failure("make deploy", "exit 2")])

    assert extract_fragments(*ingest(events), project="demo-app") == []


def test_a_retry_that_passes_without_a_change_is_not_a_lesson(ingest):
    events = conversation(
        "flaky",
        [prompt("run the tests"), bash_failure("npm test", "timeout"), bash("npm test", "ok")],
    )

    assert extract_fragments(*ingest(events), project="demo-app") == []


def test_a_calculation_on_the_way_is_not_data(ingest):
    events = conversation(
        "calc",
        [
            prompt("how much would 3 runners cost?"),
            reply("3 * $0.008 = $0.024 per minute for the three runners."),
        ],
    )

    assert extract_fragments(*ingest(events), project="demo-app") == []


def test_every_draft_is_a_valid_fragment_and_can_be_written(ingest, fixtures, tmp_path):
    sessions = [
        conversation("zh", CHINESE),
        conversation("en", ENGLISH_FIX),
        cursor_session(fixtures),
        conversation(
            "links",
            [
                prompt("we decided: link notes with [[wikilinks]]? no, plain text"),
                edit("/home/dev/code/demo-app/notes.md", "a", "b"),
                reply("Decision: fragments stay plain text instead of [[linked]] notes."),
            ],
        ),
    ]
    folder = tmp_path / "agent-memory"
    written = 0
    for envelopes in sessions:
        for draft in extract_fragments(*ingest(envelopes), project="demo-app"):
            check_draft(draft)
            assert "type" not in draft.properties
            assert all("\n" not in fact and ": " in fact for fact in draft.facts)
            assert 0 <= draft.importance <= 1
            fragment = Fragment.read(remember(folder, draft).path)
            assert "[[" not in fragment.body
            written += 1
    assert written >= 6


def test_a_finding_that_only_announces_itself_is_not_kept(ingest):
    """A reply's "The issue is clear now." or "The issue is that …, it means:" names no
    finding (what it introduces is a list the sentence does not carry); "The issue is
    clear now: X" is the finding X."""
    replies = [
        "The issue is clear now.",
        "The bug is now fixed.",
        "I can see the issue is on line 225.",
        "The issue is that if we reach line 153, it means:\n- the file is empty\n- or gone",
        "我发现了问题！",
        "基于以上发现，我将对 `test_ifeng_crawler.py` 进行以下修改：",
        "**Root cause:**",
        "Let's use the TestingHelpers package directly instead of the wrappers:",
        "The issue is clear now: there's a version mismatch between TestingHelpers 18 and "
        "Wrappers 17.",
    ]
    envelopes = conversation(
        "announced",
        [prompt("The tests fail after the upgrade, can you fix it?")]
        + [reply(text) for text in replies],
    )
    drafts = extract_fragments(*ingest(envelopes), project="demo-app")
    assert [(d.tags, d.summary) for d in drafts] == [
        # A decision may end with a colon before the code that does it, and is whole.
        (
            ["decision"],
            "Let's use the TestingHelpers package directly instead of the wrappers.",
        ),
        (
            ["finding"],
            "There's a version mismatch between TestingHelpers 18 and Wrappers 17.",
        ),
    ]
    assert drafts[1].description == "There's version mismatch between TestingHelpers 18"


@pytest.mark.parametrize(
    ("said", "confidence"),
    [
        # Declared as a decision made: the agent writes it down for what comes.
        ("Decision: the auth package reads time through ledger.clock only.", DECLARED),
        ("**Decided:** access tokens live 15 minutes.", DECLARED),
        ("We decided to keep the theme in a cookie instead of localStorage.", DECLARED),
        ("Key decision: the handler retries twice, never more.", DECLARED),
        ("We'll use one callbacks object for every handler from now on, not five.", DECLARED),
        ("We'll use one callbacks object for every handler from now on.", DECLARED),
        ("决定：卡号在日志里一律只保留后四位。", DECLARED),
        ("我们决定把重试次数定为三次。", DECLARED),
        # A choice stated in passing, on the way to something else.
        ("The handler should take one callbacks object instead of five parameters.", UNCONFIRMED),
        ("我会让 handler 接收一个回调对象，而不是五个参数。", UNCONFIRMED),
        # Rule words, or a label that only starts with the word, declare nothing.
        ("From now on handlers take their callbacks as one object.", UNCONFIRMED),
        ("今后可能需要改用 httpx。", UNCONFIRMED),
        ("决定因素：改用 httpx 的性能更好。", UNCONFIRMED),
    ],
)
def test_how_sure_an_agents_decision_said_once_is_held(ingest, said, confidence):
    """Said once by the agent alone, a decision it declares as one is held surer than one it
    states in passing (an "instead of" on the way), and less sure than the user's."""
    envelopes = conversation(
        "held",
        [
            prompt("Rework the handler, please."),
            edit(f"{ROOT}/src/handler.ts", "a", "b"),
            reply(said),
        ],
    )
    (decision,) = by_tag(extract_fragments(*ingest(envelopes), project="demo-app"), "decision")
    assert decision.confidence == confidence


def test_a_fault_told_with_instead_of_is_no_decision(ingest):
    """An agent telling what the code does wrong ("returns $null instead of an empty
    array") has chosen nothing: no decision for the vault, however its words contrast."""
    envelopes = conversation(
        "fault",
        [
            prompt("Why does the changelog step crash on a quiet week?"),
            reply(
                "When the pipeline yields nothing, PowerShell returns `$null` instead of an "
                "empty array, so `.Count` is missing. This suggests the filter runs before "
                "the sort rather than after it."
            ),
        ],
    )
    assert by_tag(extract_fragments(*ingest(envelopes), project="demo-app"), "decision") == []


def test_a_declared_decision_is_held_between_the_agents_passing_word_and_the_users():
    assert UNCONFIRMED < DECLARED < CONFIRMED


def test_a_task_that_quotes_only_a_number_is_told_by_its_own_words(ingest):
    said = [
        prompt("We get this error:\n```\n503\n```"),
        reply("We'll use a retry with backoff instead of failing at once."),
    ]
    drafts = extract_fragments(*ingest(conversation("quoted", said)), project="demo-app")

    (decision,) = by_tag(drafts, "decision")
    assert "task: We get this error:" in decision.facts
