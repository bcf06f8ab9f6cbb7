"""A session that recalls a decision is not recorded as making it, and a degenerate
extraction is never written (English and Chinese)."""

from __future__ import annotations

import pytest

from memvault.derive.fragments import extract_fragments
from memvault.derive.summarize import summarize
from memvault.derive.text import substantive
from memvault.vault.fragments import Fragment
from memvault.vault.remember import remember
from tests.pipeline.sessions import conversation, edit, prompt, reply

ROOT = "/home/dev/code/demo-app"


def decisions(drafts):
    return [d for d in drafts if "decision" in d.tags]


def memory_tool(name: str, output: str) -> tuple[str, dict]:
    return "post_tool_use", {
        "tool_name": f"mcp__memvault__{name}",
        "tool_input": {"query": "login flow"},
        "tool_output": output,
    }


ORIGINAL = [
    prompt("The login flow keeps failing on mobile, fix it"),
    edit(f"{ROOT}/src/auth.ts", "implicit", "pkce"),
    reply("We'll use PKCE for the login flow instead of the implicit grant."),
]


@pytest.mark.parametrize(
    "answer",
    [
        "We decided earlier to use PKCE for the login flow.",
        "Earlier we decided to use PKCE for the login flow instead of the implicit grant.",
        "As decided, the login flow uses PKCE instead of the implicit grant.",
        "As we agreed last time, we'll use PKCE for the login flow.",
        "We already decided to use PKCE for the login flow.",
        "According to memory, we chose PKCE for the login flow.",
        "> Decision: use PKCE for the login flow instead of the implicit grant",
        "From the saved fragment: we'll use PKCE instead of the implicit grant.",
        "上次決定登入流程改用 PKCE，而不是 implicit flow。",
        "之前决定了登入流程改用 PKCE。",
        "我們之前決定統一用 fetch 前綴。",
        "按照之前的決定，登入流程改用 PKCE。",
        "根据记忆，登入流程采用 PKCE。",
        "> 决定：登入流程改用 PKCE，而不是 implicit flow",
    ],
)
def test_recalling_a_decision_is_not_a_decision(ingest, answer):
    events = conversation(
        "recall", [prompt("What did we decide about the login flow?"), reply(answer)]
    )
    session = ingest(events)
    assert extract_fragments(*session, project="demo-app") == []
    assert summarize(*session).decisions == []


def test_a_memory_tool_result_and_the_injected_context_are_not_decisions(ingest):
    block = (
        "📖 agent memory：讀取 1 個碎片 → [Use PKCE for the login flow → relevant]\n\n"
        "## Agent memory\n- We'll use PKCE for the login flow instead of the implicit grant."
    )
    events = conversation(
        "tools",
        [
            ("context_injected", {"context": block}),
            prompt("Which grant does the login flow use"),
            memory_tool("memory_search", "decision: we'll use PKCE instead of the implicit grant"),
            reply(f"{block}\n\nThe login flow uses the PKCE grant."),
        ],
    )
    assert decisions(extract_fragments(*ingest(events), project="demo-app")) == []


def test_a_recall_session_leaves_the_original_fragment_as_it_was(ingest, tmp_path):
    folder = tmp_path / "agent-memory"
    folder.mkdir()
    (original,) = decisions(extract_fragments(*ingest(conversation("s1", ORIGINAL)), project="p"))
    written = remember(folder, original)
    before = written.path.read_text(encoding="utf-8")
    recall = conversation(
        "s2",
        [
            prompt("What did we decide earlier about the login flow?"),
            reply(
                "We decided earlier to use PKCE for the login flow instead of the implicit grant."
            ),
        ],
    )
    for draft in extract_fragments(*ingest(recall), project="p"):
        remember(folder, draft)
    assert written.path.read_text(encoding="utf-8") == before
    assert len(list(folder.glob("*.md"))) == 1
    assert "task: What did we decide" not in Fragment.read(written.path).body


def test_a_decision_answering_a_question_takes_no_task_from_the_question(ingest):
    events = conversation(
        "q",
        [
            prompt("Should we keep the implicit grant for the login flow?"),
            reply("Let's go with PKCE for the login flow instead of the implicit grant."),
        ],
    )
    (decision,) = decisions(extract_fragments(*ingest(events), project="demo-app"))
    assert not [f for f in decision.facts if f.startswith("task:")]


def test_a_request_worded_as_a_question_is_still_the_task(ingest):
    events = conversation(
        "req",
        [
            prompt("The login flow fails on mobile, can you fix it?"),
            reply("We'll use PKCE for the login flow instead of the implicit grant."),
        ],
    )
    (decision,) = decisions(extract_fragments(*ingest(events), project="demo-app"))
    assert "task: The login flow fails on mobile, can you fix it?" in decision.facts


@pytest.mark.parametrize(
    "answer",
    [
        "Decision: use).",
        "Decision: use)",
        "Decided: the.",
        "We decided to use",
        "Decision: use PKCE)",
        "Decision: `use",
        "决定：用）。",
        "决定：改用",
        "結論：是的",
    ],
)
def test_a_degenerate_extraction_is_never_written(ingest, answer):
    events = conversation("deg", [prompt("Fix the login flow on mobile"), reply(answer)])
    assert extract_fragments(*ingest(events), project="demo-app") == []


@pytest.mark.parametrize(
    "text",
    [
        "Use PKCE for the login flow.",
        "We'll use the refresh-token flow instead of forcing a new login",
        "Pin Python to 3.11 in CI.",
        "Use PKCE.",
        "API 命名统一用 fetch 前缀",
        "我们决定改用 scp 上传构建产物，而不是在镜像里额外安装 rsync",
        "快取統一用 Redis。",
        "We'll use httpx from now on.",
        "Lint, format, type-check and so on",
    ],
)
def test_real_statements_are_substantive(text):
    assert substantive(text)


@pytest.mark.parametrize(
    "text",
    [
        "use).",
        "use",
        "the.",
        "use PKCE)",
        "(use PKCE",
        "`use",
        "to.",
        "- .",
        "用）。",
        "改用",
        "是的",
        "The retry loop now depends on.",
        # Seen in real sessions as a lesson of its own: it points at what came before.
        "I need to be careful here.",
        "Keep that in mind.",
    ],
)
def test_degenerate_statements_are_not(text):
    assert not substantive(text)


@pytest.mark.parametrize(
    "text",
    ["Use pnpm here.", "Drop that column.", "Revert this commit", "Make it async",
     "Keep it simple.", "Be careful with the pool size."],
)  # fmt: skip
def test_a_short_statement_that_names_its_object_is_substantive(text):
    assert substantive(text)


def test_a_decision_listed_right_after_the_report_line_is_the_agents_own(ingest):
    events = conversation(
        "own",
        [
            prompt("Fix the login flow on mobile"),
            reply(
                "📖 agent memory：讀取 0 個碎片 → nothing relevant yet\n\n"
                "- We'll use PKCE for the login flow instead of the implicit grant."
            ),
        ],
    )
    (decision,) = decisions(extract_fragments(*ingest(events), project="demo-app"))
    assert decision.summary.startswith("We'll use PKCE")


@pytest.mark.parametrize(
    "answer",
    [
        "We'll keep the access token in memory only, never in localStorage.",
        "We decided to load the whole index from memory instead of from disk.",
        "这个方案是我们讨论后决定用的。",
        "我们决定改用 scp 上传构建产物，部署流程到此完成。",
    ],
)
def test_a_fresh_decision_that_mentions_memory_or_ends_plainly_is_kept(ingest, answer):
    events = conversation("fresh", [prompt("Fix the login flow on mobile"), reply(answer)])
    assert len(decisions(extract_fragments(*ingest(events), project="demo-app"))) == 1


@pytest.mark.parametrize(
    "question", ["what did we decide to use for the login flow", "关于登入流程我们最后是怎么决定的"]
)
def test_a_recall_question_without_a_question_mark_is_not_a_decision(ingest, question):
    events = conversation("ask", [prompt(question)])
    session = ingest(events)
    assert extract_fragments(*session, project="demo-app") == []
    assert summarize(*session).decisions == []
