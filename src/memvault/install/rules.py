"""The agent rules: one text for every host, in English with Chinese alongside, in
Traditional (``zh-Hant``) or Simplified (``zh-Hans``) characters, or English only (``en``).

They tell the agent to read memory before a task and write it after, which two report lines
to show, and how to run the session board, naming the phrases :mod:`memvault.triggers`
recognises for each board operation (in every language: a user may say any of them).
:func:`agent_rules` is their marked block in a host's rules file, the same for every host.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

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


class Operation(NamedTuple):
    """A board operation as the rules name it, and what a user says to ask for it (every
    phrase one :mod:`memvault.triggers` recognises as that operation; ``<id>`` stands for a
    Session ID). Each Chinese text is written in both scripts, character for character."""

    name: str  # in English
    hans: str  # the name in Simplified characters
    hant: str  # the same in Traditional
    traditional: tuple[str, ...]  # what a user says, in Traditional characters
    simplified: tuple[str, ...]  # the same phrases in Simplified
    english: tuple[str, ...]

    def said(self, language: str) -> tuple[str, ...]:
        """The phrases rules in ``language`` name: its own script's, then English (English
        rules name the Traditional ones too: they are understood whatever the setting)."""
        chinese = self.simplified if language == "zh-Hans" else self.traditional
        return (*chinese, *self.english)


OPERATIONS: dict[str, Operation] = {
    "register": Operation(
        "register this session",
        "注册",
        "註冊",
        ("註冊 memory session", "補註冊 memory", "手動註冊 memory"),
        ("注册 memory session", "补注册 memory", "手动注册 memory"),
        ("register memory session",),
    ),
    "update": Operation(
        "update this session",
        "状态更新",
        "狀態更新",
        (
            "狀態更新",
            "memory session 狀態更新",
            "更新 memory session",
            "更新 memory 狀態",
            "整理這個 session",
        ),
        (
            "状态更新",
            "memory session 状态更新",
            "更新 memory session",
            "更新 memory 状态",
            "整理这个 session",
        ),
        ("update memory session",),
    ),
    "continue": Operation(
        "continue an earlier session",
        "接续",
        "接續",
        ("接續 memory <id>", "接續 memory session <id>", "引用 memory <id>", "沿用 memory <id>"),
        ("接续 memory <id>", "接续 memory session <id>", "引用 memory <id>", "沿用 memory <id>"),
        ("continue memory <id>",),
    ),
    "release": Operation(
        "stop continuing it",
        "解除引用",
        "解除引用",
        ("解除引用 memory <id>", "解除 memory 引用 <id>"),
        ("解除引用 memory <id>", "解除 memory 引用 <id>"),
        ("release memory reference <id>",),
    ),
    "archive": Operation(
        "archive a session",
        "封存",
        "封存",
        ("封存 memory session <id>",),
        ("封存 memory session <id>",),
        ("archive memory session <id>",),
    ),
    "organize": Operation(
        "tidy the board",
        "整理",
        "整理",
        ("整理 memory", "清理 memory"),
        ("整理 memory", "清理 memory"),
        ("organize memory", "clean up memory"),
    ),
}

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


_TABLE_HEADER = {
    "en": "| operation | the user says | tool |",
    "zh-Hans": "| operation · 操作 | the user says · 触发语 | tool |",
    "zh-Hant": "| operation · 操作 | the user says · 觸發語 | tool |",
}
# Every Chinese passage of ``_TEXT`` (written in Simplified characters) and the same text in
# Traditional characters, character for character: written out, not converted at run time.
TRADITIONAL = {
    "智能体记忆": "智能體記憶",
    "memvault 把长期记忆存在用户的 Obsidian vault：记忆碎片 + 会话看板，通过 MCP 服务器": (
        "memvault 把長期記憶存在用戶的 Obsidian vault：記憶碎片 + 會話看板，通過 MCP 服務器"
    ),
    "的工具读写。它和编辑器自带的记忆是两套独立存储，一个满了不代表另一个不能写。": (
        "的工具讀寫。它和編輯器自帶的記憶是兩套獨立存儲，一個滿了不代表另一個不能寫。"
    ),
    "任务开始先读": "任務開始先讀",
    "任何用户消息（哪怕只是一个文件名或一个词）": "任何用戶消息（哪怕只是一個文件名或一個詞）",
    "都是任务开始：先读记忆，再做事，优先于知识库和网络。": (
        "都是任務開始：先讀記憶，再做事，優先於知識庫和網絡。"
    ),
    "任务转向时重新搜索。": "任務轉向時重新搜索。",
    "回复开头报告读取结果（记忆块的第一行就是）：": "回覆開頭報告讀取結果（記憶塊的第一行就是）：",
    "任务结束必写": "任務結束必寫",
    "回复结束前自问三个问题：": "回覆結束前自問三個問題：",
    "有决策、结论或发现吗？": "有決策、結論或發現嗎？",
    "有踩坑或教训吗？": "有踩坑或教訓嗎？",
    "下次会用到吗？": "下次會用到嗎？",
    '任一为"是"：本轮立即写入，不拖延。': '任一為"是"：本輪立即寫入，不拖延。',
    "值得写：决策/结论/数据、踩坑教训、调研发现。不写：临时计算、一次性信息。": (
        "值得寫：決策/結論/數據、踩坑教訓、調研發現。不寫：臨時計算、一次性信息。"
    ),
    "碎片用压缩格式，只求 agent 解析效率：": "碎片用壓縮格式，只求 agent 解析效率：",
    "禁写": "禁寫",
    "字段和": "字段和",
    "链接": "鏈接",
    "每次回复末尾加上：": "每次回覆末尾加上：",
    "会话看板": "會話看板",
    "会话开始时 memvault 自动注册并告知 Memory Session ID；看板操作一律用它，不借用别的行。": (
        "會話開始時 memvault 自動註冊並告知 Memory Session ID；看板操作一律用它，不借用別的行。"
    ),
    "没有 ID 时先注册。": "沒有 ID 時先註冊。",
    "用户说出下列触发语时，调用对应工具并报告 memvault 的结果：": (
        "用戶說出下列觸發語時，調用對應工具並報告 memvault 的結果："
    ),
}


def phrases(
    operation: str, session_id: str = SESSION_ID_EXAMPLE, language: str | None = None
) -> list[str]:
    """What a user says to ask for ``operation``, with ``<id>`` filled in: in the rules of
    ``language``, or (None) in every script and language."""
    found = OPERATIONS[operation]
    said = (
        found.said(language)
        if language
        else (*found.traditional, *found.simplified, *found.english)
    )
    return list(dict.fromkeys(p.replace("<id>", session_id) for p in said))


def render(language: str) -> str:
    """The rules as markdown, in ``language`` (a ``language`` setting)."""
    words = strings(language)
    english = language == "en"
    traditional = language == "zh-Hant"
    rows = [_TABLE_HEADER[language], "| --- | --- | --- |"]
    for operation, found in OPERATIONS.items():
        spoken = ", ".join(f"`{p}`" for p in found.said(language))
        chinese = found.hant if traditional else found.hans
        named = found.name if english else f"{found.name} · {chinese}"
        rows.append(f"| {named} | {spoken} | `{TOOLS[operation]}` |")
    if english:
        template = _english_only(_TEXT)
    elif traditional:
        template = in_traditional(_TEXT)
    else:
        template = _TEXT
    return template.format(
        operations="\n".join(rows),
        read_report=words.read_report,
        write_report=words.write_report,
        answers={"en": "yes or no", "zh-Hans": "有 or 无", "zh-Hant": "有 or 無"}[language],
        example=SESSION_ID_EXAMPLE,
        **TOOLS,
    )


def in_traditional(text: str) -> str:
    """``text`` (the rules' template, its Chinese in Simplified characters) with each Chinese
    passage replaced by its Traditional text from ``TRADITIONAL``."""
    for simplified in sorted(TRADITIONAL, key=len, reverse=True):
        text = text.replace(simplified, TRADITIONAL[simplified])
    return text


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
