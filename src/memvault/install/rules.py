"""The agent rules: one text for every host, in English with Chinese alongside (English
only with ``MEMVAULT_LANGUAGE=en``).

They tell the agent to read memory before a task and write it after, which two report lines
to show, and how to run the session board, naming the phrases :mod:`memvault.triggers`
recognises for each board operation (in every language: a user may say any of them).
:func:`agent_rules` is their marked block in a host's rules file, the same for every host.
"""

from __future__ import annotations

import re
from pathlib import Path

from memvault.install.files import Artifact, Stripped, drop_block, put_block
from memvault.language import strings

SESSION_ID_EXAMPLE = "2026-11-30-1432-cursor-main-agent"

# The memvault MCP server's tools the rules tell the agent to call.
TOOLS = {
    "recall": "memory_recall",
    "search": "memory_search",
    "get": "memory_get",
    "project": "memory_project",
    "save": "memory_save",
    "register": "memory_session_register",
    "update": "memory_session_update",
    "continue": "memory_session_continue",
    "release": "memory_session_release",
    "archive": "memory_session_archive",
    "organize": "memory_organize",
}

# Board operation → (English name, 中文, what a user says). `<id>` stands for a Session ID.
# Every phrase here is one memvault.triggers recognises as that operation.
OPERATIONS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "register": (
        "register this session",
        "注册",
        ("註冊 memory session", "補註冊 memory", "手動註冊 memory", "register memory session"),
    ),
    "update": (
        "update this session",
        "状态更新",
        (
            "狀態更新",
            "memory session 狀態更新",
            "更新 memory session",
            "更新 memory 狀態",
            "整理這個 session",
            "update memory session",
        ),
    ),
    "continue": (
        "continue an earlier session",
        "接续",
        (
            "接續 memory <id>",
            "接續 memory session <id>",
            "引用 memory <id>",
            "沿用 memory <id>",
            "continue memory <id>",
        ),
    ),
    "release": (
        "stop continuing it",
        "解除引用",
        ("解除引用 memory <id>", "解除 memory 引用 <id>", "release memory reference <id>"),
    ),
    "archive": (
        "archive a session",
        "封存",
        ("封存 memory session <id>", "archive memory session <id>"),
    ),
    "organize": (
        "tidy the board",
        "整理",
        ("整理 memory", "清理 memory", "organize memory", "clean up memory"),
    ),
}

READ_REPORT = strings().read_report
WRITE_REPORT = strings().write_report
# In English-only rules: a line in Chinese goes, and so does the Chinese after English.
_CJK = "\u3000-\u303f\u3400-\u9fff\uff00-\uffef"
_CHINESE_CHARS = re.compile(f"[{_CJK}]")
_CHINESE_LINE = re.compile(f"^\\s*[{_CJK}]")
_CHINESE_TAIL = re.compile(f"(?: · | )[{_CJK}].*$")

_TEXT = """\
# memvault: agent memory · 智能体记忆

memvault keeps this agent's long-term memory as plain markdown in the user's Obsidian vault:
memory fragments (facts worth keeping, grouped by project) and a session board (one row per
agent session). Use the tools of the `memvault` MCP server. This memory is separate from any
memory tool the editor has of its own: one being full says nothing about the other.
memvault 把长期记忆存在用户的 Obsidian vault：记忆碎片 + 会话看板，通过 MCP 服务器 `memvault`
的工具读写。它和编辑器自带的记忆是两套独立存储，一个满了不代表另一个不能写。

## 1. Read before every task · 任务开始先读

Every user message starts a task, even a bare file name or a single word. Read memory first,
before any other work and before the knowledge base or the web.
任何用户消息（哪怕只是一个文件名或一个词）都是任务开始：先读记忆，再做事，优先于知识库和网络。

1. The memvault memory blocks already in context are the first read: one at session start,
   and with each prompt what memory has that is relevant and not given before (nothing when
   there is nothing new). Without any, call `{recall}` with the user's request as `query`
   and the project.
2. When that is not enough, go down the layers: `{search}` with the task's key terms (L0:
   one-line summaries), `{get}` for each hit that looks relevant (L1: the whole fragment),
   `{project}` when one fragment is still not enough (L2: the rest of the project).
3. Search again whenever the task changes direction. 任务转向时重新搜索。

Open the reply with one line saying what was read (the memory block starts with it):
回复开头报告读取结果（记忆块的第一行就是）：

`{read_report}`

## 2. Write after every task · 任务结束必写

Before the reply ends, answer three questions:
回复结束前自问三个问题：

- A decision, conclusion or finding? 有决策、结论或发现吗？
- A pitfall or a lesson? 有踩坑或教训吗？
- Something the next session will need? 下次会用到吗？

Any yes: save it with `{save}` in this same turn, not later. 任一为"是"：本轮立即写入，不拖延。
Worth saving: decisions, conclusions, numbers and prices, pitfalls, research findings. Not
worth it: temporary calculations, one-off information.
值得写：决策/结论/数据、踩坑教训、调研发现。不写：临时计算、一次性信息。

Write fragments compressed, for an agent to parse, not for a person to enjoy:
碎片用压缩格式，只求 agent 解析效率：

- `project`, a one-sentence `summary`, `importance` from 0 to 1, `confidence` if useful.
- `facts`: one `key: value` line each, at most two lines long, key numbers, relations with
  → ⇒ ∵ ∴. No narrative paragraphs, no headings, no title (the file name is the title).
- Never a `type` or `related_fragments` field and never `[[wikilinks]]`: fragments are plain
  text grouped by `project`. 禁写 `type`、`related_fragments` 字段和 `[[链接]]`。
- memvault merges a fragment into a very similar one of the same project by itself.

End every reply with this line, answering {answers}:
每次回复末尾加上：

`{write_report}`

## 3. The session board · 会话看板

- At session start memvault registers the session and says
  `Your Memory Session ID is: <id>` (for example `{example}`). That ID is this
  conversation's: use it for every board operation, and never take another row's ID as yours.
  会话开始时 memvault 自动注册并告知 Memory Session ID；看板操作一律用它，不借用别的行。
- No such line in context: register first with `{register}`, giving your agent name
  (`cursor-main-agent`, `claude-code-main-agent`: the host's, never a task name), then use
  the ID it reports. 没有 ID 时先注册。
- When the user says one of these phrases (`<id>` is a Session ID), run the operation with
  its tool and report what memvault answered:
  用户说出下列触发语时，调用对应工具并报告 memvault 的结果：

{operations}

- Update merges into the session snapshot: pass what is new or changed; memvault keeps every
  earlier item unless you mark it `[superseded]`, `[resolved]` or `[done]`.
- Continue adds the earlier session to this one's Continues From; release undoes that.
- Organize never archives. Archive refuses a session that others still continue from:
  release those references first.
- If the memvault tools are not available, say so once, then carry on with the task.
"""


def phrases(operation: str, session_id: str = SESSION_ID_EXAMPLE) -> list[str]:
    """What a user says to ask for ``operation``, with ``<id>`` filled in."""
    return [p.replace("<id>", session_id) for p in OPERATIONS[operation][2]]


def render(language: str) -> str:
    """The rules as markdown, in ``language`` (a ``language`` setting)."""
    words = strings(language)
    english = language == "en"
    header = (
        "| operation | the user says | tool |"
        if english
        else ("| operation · 操作 | the user says · 触发语 | tool |")
    )
    rows = [header, "| --- | --- | --- |"]
    for operation, (name, chinese, said) in OPERATIONS.items():
        spoken = ", ".join(f"`{p}`" for p in said)
        named = name if english else f"{name} · {chinese}"
        rows.append(f"| {named} | {spoken} | `{TOOLS[operation]}` |")
    template = _english_only(_TEXT) if english else _TEXT
    return template.format(
        operations="\n".join(rows),
        read_report=words.read_report,
        write_report=words.write_report,
        answers="yes or no" if english else "有 or 无",
        example=SESSION_ID_EXAMPLE,
        **TOOLS,
    )


def _english_only(text: str) -> str:
    lines = []
    for line in text.splitlines():
        chinese = len(_CHINESE_CHARS.findall(line))
        if _CHINESE_LINE.match(line) or 2 * chinese > sum(
            c.isascii() and c.isalpha() for c in line
        ):
            continue  # a line in Chinese, perhaps naming a tool or a product
        lines.append(_CHINESE_TAIL.sub("", line).rstrip())
    return "\n".join(lines) + "\n"


def agent_rules(path: Path, *, language: str, header: str = "") -> Artifact:
    """The rules, in ``language``, as memvault's marked block in the file at ``path``: a new
    file starts with ``header`` (Cursor's rule frontmatter), and a file left with only that
    is empty."""

    def put(data: bytes | None) -> bytes:
        if data is None and header:
            data = header.encode("utf-8")
        return put_block(path, data, render(language))

    def take(data: bytes) -> Stripped:
        text = drop_block(path, data)
        return Stripped(text.encode("utf-8"), empty=text.strip() in ("", header.strip()))

    return Artifact(path, "agent rules", put, take)
