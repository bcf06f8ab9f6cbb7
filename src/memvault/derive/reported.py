"""The files an agent's reply says it changed, for histories whose edits were never recorded.

A live hook sees every edit as a tool call. A conversation exported from a chat window (a
Cursor or Copilot history) often keeps the agent's words and its reads but not its edits,
and its reply is then the only account of what the turn changed: "### Created
SecureTempFileHelper.cs", "- **FileDiffer.cs**: replaced 2 instances", "已修改
`src/app.py`". A line, or a sentence of one, counts when it names a file and a change
("created", "updated", "修改"…) and denies none ("did not change", "without editing",
"未修改"); code blocks are what the agent showed, not what it reports.

A file is kept by a path the turn knows it by, never by a bare name alone: a name a tool of
the turn read or searched (``FileDiffer.cs`` → ``BlastMerge.Core/Services/FileDiffer.cs``)
or that the turn's replies wrote with its folder. A bare name that no such path ends in, or
that two do, is left out: a fragment cites files that a check against the project's folder
must find.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_FENCE = re.compile(r"```.*?(?:```|$)|~~~.*?(?:~~~|$)", re.DOTALL)
_CHANGE = re.compile(
    r"\b(?:creat(?:e|ed|es|ing)|add(?:ed|s|ing)?|updat(?:e|ed|es|ing)|modif(?:y|ied|ies|ying)|"
    r"chang(?:e|ed|es|ing)|replac(?:e|ed|es|ing)|remov(?:e|ed|es|ing)|delet(?:e|ed|es|ing)|"
    r"edit(?:ed|s|ing)?|rewr(?:ite|ote|itten|ites|iting)|refactor(?:ed|s|ing)?|"
    r"fix(?:ed|es|ing)?|renam(?:e|ed|es|ing)|mov(?:e|ed|es|ing)|implement(?:ed|s|ing)?|"
    r"wr(?:ote|itten)|migrat(?:e|ed|es|ing)|extract(?:ed|s|ing)?)\b"
    r"|修改|创建|創建|新建|更新|添加|新增|删除|刪除|重构|重構|替换|替換|重写|重寫|修复|修復|"
    r"改为|改為|改成|编辑|編輯",
    re.IGNORECASE,
)
_DENIED = re.compile(
    r"\b(?:not|never|without|no|nothing)\b|n't\b|未|没有|沒有|无需|無需|不需要|不用",
    re.IGNORECASE,
)
# A file as written: an optional folder path (``/`` or ``\``), a name, a dot and an
# extension of letters and digits; not a call (``Path.Combine(``) nor part of a URL.
_FILE = re.compile(
    r"(?<![\w./\\:@-])((?:[A-Za-z]:)?[/\\]?(?:[\w.@+-]+[/\\])*[\w@+-][\w.@+-]*"
    r"\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w(/\\-]|\.[A-Za-z0-9])"
)
# A line, or a sentence of one: a denial ("api.ts needed nothing") is read where it is said.
_SAID = re.compile(r"\n|(?<=[.!?。！？；])\s+")
_ABSOLUTE = re.compile(r"^(?:[A-Za-z]:)?/")


def written_files(text: str) -> list[str]:
    """The files ``text`` writes, each once, with ``/`` between folders."""
    found = (m.replace("\\", "/") for m in _FILE.findall(_FENCE.sub(" ", text)))
    return list(dict.fromkeys(found))


def changed_files(text: str) -> list[str]:
    """The files ``text`` names in a line or sentence that reports a change and denies
    none."""
    found: list[str] = []
    for said in _SAID.split(_FENCE.sub(" ", text)):
        if _CHANGE.search(said) and not _DENIED.search(said):
            found += written_files(said)
    return list(dict.fromkeys(found))


def reported_changes(replies: Iterable[str], known: Iterable[str]) -> list[str]:
    """The files ``replies`` (a turn's) report changing, each by a path the turn knows:
    ``known`` (the files its tools named) or written with a folder in its replies. A path
    written from the root (``C:\\dev\\shop\\src\\app.py``) is the known path it ends in."""
    replies, known = list(replies), list(known)
    written = (f for r in replies for f in written_files(r) if "/" in f)
    paths = [
        p
        for p in dict.fromkeys([*known, *written])
        if ".." not in p.split("/") and not _ABSOLUTE.match(p)
    ]
    found: list[str] = []
    for name in (f.casefold() for r in replies for f in changed_files(r)):
        if _ABSOLUTE.match(name):
            ends = [p for p in paths if name.endswith("/" + p.casefold())]
        else:  # a path a tool named as written is that file, not one in a folder below
            ends = [p for p in known if p.casefold() == name] or [
                p for p in paths if _ends(p, name)
            ]
        # The same file written deeper and shallower ("Services/A.cs", "Core/Services/A.cs")
        # is the deepest; two files of one name in two folders are two, and neither is kept.
        deepest = {p for p in ends if not any(o != p and _ends(o, p.casefold()) for o in ends)}
        if len(deepest) == 1:
            found.append(deepest.pop())
    return list(dict.fromkeys(found))


def _ends(path: str, name: str) -> bool:
    lowered = path.casefold()
    return lowered == name or lowered.endswith("/" + name)
