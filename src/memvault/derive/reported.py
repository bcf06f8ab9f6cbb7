"""The files an agent's reply says it changed, for histories whose edits were never recorded.

A live hook sees every edit as a tool call. A conversation exported from a chat window (a
Cursor or Copilot history) often keeps the agent's words and its reads but not its edits,
and its reply is then the only account of what the turn changed: "### Created
SecureTempFileHelper.cs", "- **FileDiffer.cs**: replaced 2 instances", "已修改
`src/app.py`", or a list under "**Modified files:**". A clause counts when it reports a
change made ("created", "updated", "修改了", "已修改"…: a past form, so an offer or a plan,
"let me update", "you could add", "需要修改", is none) and neither denies it ("did not
change", "unchanged", "未修改"), foresees it ("should be updated") nor asks it; so does a
list item under a heading or a label that reports one. Code blocks are what the agent
showed, not what it reports.

A file is kept by a path the turn's tools named it by (``FileDiffer.cs`` →
``BlastMerge.Core/Services/FileDiffer.cs``, ``C:\\dev\\shop\\src\\app.py`` → ``src/app.py``),
else by one its replies wrote with its folder; never by a bare name alone, nor by a name
two paths end in, nor by a folder the turn knows a path in ("Updated BlastMerge.Core"). A
fragment's files are checked against the project's folder: a name alone would be looked
for at its root and found gone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from memvault.derive.cues import clean
from memvault.derive.entities import file_name

# What a report says was done: past forms, and Chinese marked done (了 after, 已 before).
_CHINESE_CHANGES = (
    "修改|更改|改动|改動|创建|創建|新建|更新|添加|新增|删除|刪除|重构|重構|替换|替換|重写|重寫|"
    "修复|修復|编辑|編輯"
)
_CHANGED = re.compile(
    r"\b(?:created|added|updated|modified|changed|replaced|removed|deleted|edited|rewr(?:ote|itten)|"
    r"refactored|fixed|renamed|moved|implemented|wr(?:ote|itten)|migrated|extracted|"
    r"(?:files?|changes?) (?:changed|modified|touched|created|updated|edited)|"
    r"(?:modified|changed|updated|new|created|edited|touched) files?)\b"
    rf"|(?:已经?|已經)(?:{_CHINESE_CHANGES})|(?:{_CHINESE_CHANGES})了"
    rf"|(?:修改|变更|變更|新增|新建)的?文件",
    re.IGNORECASE,
)
# A change denied, or only foreseen ("should be updated"): no report of one made. Offers
# and plans ("let me update", "you could add") say no past form, and are not read at all.
_NOT_MADE = re.compile(
    r"(?:\b(?:not|never|no|nothing|without)|n't)(?:\W+\w+){0,3}?\W+(?:been\s+)?"
    r"(?:chang|modif|updat|edit|touch|creat|add|fix|need|requir)\w*"
    r"|\b(?:unchanged|untouched|as is|no (?:changes?|edits?)|need(?:s|ed)? nothing)\b"
    r"|\b(?:should|could|would|must|will|might|may|can|needs? to|ha(?:s|ve) to)\s+"
    r"(?:also\s+|now\s+|still\s+)?(?:be|have been)\b"
    r"|未(?:修改|更改|改动|改動|变|變)|无需|無需|不需要|没有(?:修改|更改|改动)|沒有(?:修改|更改|改動)",
    re.IGNORECASE,
)
# A change told of, not reported: one that would be made on a condition or was asked
# about ("if you updated settings.py", "whether db.py was changed"), said before the change
# itself; history ("was modified 3 days ago", "last month", "git log shows", "in #123");
# and what the user did ("you've updated config.py"). A live session with no edit of its
# own tells of such changes while it only reads.
_CONDITION = re.compile(r"\b(?:if|when|whenever|unless|whether)\b|如果|假如|是否", re.IGNORECASE)
_TOLD_OF = re.compile(
    r"\b(?:ago|previously|originally|yesterday|last (?:week|month|year|time|commit|release))\b"
    r"|\bgit (?:log|blame|history|show)\b|\bin (?:commit|PR|pull request)\b|#\d+\b"
    r"|\byou(?:'ve|'d| have| had)?\s+(?:\w+\s+)?(?:created|added|updated|modified|changed|"
    r"replaced|removed|deleted|edited|refactored|fixed|renamed|moved|made)\b"
    r"|曾经|曾經|之前|以前|你(?:已经?|已經)?(?:修改|更改|改动|改動|创建|創建|添加|删除|刪除)",
    re.IGNORECASE,
)
# A line, a sentence of one, and a clause of that (at a comma or semicolon): a denial
# ("api.ts needed no change") is read where it is said.
_CLAUSE = re.compile(r"\n|(?<=[.!?])\s+|(?<=[。！？；，、;])|,\s+")
_QUESTION = re.compile(r"[?？]\s*$")
# A heading or a label that opens a list: "## Files modified", "**Modified files:**".
_OPENS = re.compile(r"^\s*(?:#{1,6}\s.*|.*[:：]\**\s*)$")
_ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
# A file as written: an optional folder path (``/`` or ``\``), a name, a dot and an
# extension of letters and digits; not a call (``Path.Combine(``) nor part of a URL. ASCII
# only: Chinese written up against a path (``修改了src/app.py``) is not part of it.
_FILE = re.compile(
    r"(?<![\w./\\:@+-])((?:[A-Za-z]:)?[/\\]?(?:[\w.@+-]+[/\\])*[\w@+-][\w.@+-]*"
    r"\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w(/\\-]|\.[A-Za-z0-9])",
    re.ASCII,
)
# Code between backticks, paired from the left: a path with a space is written so, and none
# of it is a file this reader takes.
_CODE = re.compile(r"`([^`\n]*)`")
_ABSOLUTE = re.compile(r"^(?:[A-Za-z]:)?/")


def written_files(text: str) -> list[str]:
    """The files ``text`` writes, each once, with ``/`` between folders and no leading
    ``./``."""
    return _files(clean(text))


def changed_files(text: str) -> list[str]:
    """The files ``text`` reports changing: named in a clause that reports a change made,
    or in a list item under a heading or a label that does."""
    return _changed(clean(text))


def reported_changes(replies: Iterable[str], known: Iterable[str]) -> list[str]:
    """The files ``replies`` (a turn's) report changing, each by a path the turn knows:
    ``known`` (the files its tools named), else one its replies wrote with a folder."""
    said = [clean(reply) for reply in replies]
    known = list(known)
    written = [f for text in said for f in _files(text) if "/" in f]
    # A name with a dot can be a folder ("BlastMerge.Core"): one the turn knows a path in,
    # however it was written (from the root, deeper), is neither a file nor a candidate.
    folders = {
        folder.casefold() for path in (*known, *written) for folder in _folders_of(file_name(path))
    }
    ends = {end for folder in folders for end in _ends_of(folder)}
    known_by = _by_name(p for p in known if not _is_folder(p, folders, ends))
    written_by = _by_name(p for p in written if not _is_folder(p, folders, ends))
    names = dict.fromkeys(f.casefold() for text in said for f in _changed(text))
    found = [
        path
        for name in names
        if (path := _resolved(name, known_by.get(_last(name), []), written_by.get(_last(name), [])))
        is not None
    ]
    return list(dict.fromkeys(found))


def _is_folder(path: str, folders: set[str], ends: set[str]) -> bool:
    """Whether ``path`` is one of ``folders`` (casefolded; ``ends``: their ``_ends_of``),
    either written deeper."""
    path = file_name(path).casefold()
    return path in ends or any(end in folders for end in _ends_of(path))


def _ends_of(path: str) -> list[str]:
    """``a/b/c`` → ``a/b/c``, ``b/c``, ``c``."""
    parts = path.split("/")
    return ["/".join(parts[start:]) for start in range(len(parts))]


def _files(text: str) -> list[str]:
    """``written_files`` of a text already ``clean``."""
    return list(dict.fromkeys(file_name(f) for f in _FILE.findall(_CODE.sub(_unspaced, text))))


def _changed(text: str) -> list[str]:
    """``changed_files`` of a text already ``clean``."""
    found: list[str] = []
    opened = False  # under a heading or label that reports a change
    for line in text.split("\n"):
        if _ITEM.match(line) and opened:
            found += [
                f for clause in _CLAUSE.split(line) if _not_denied(clause) for f in _files(clause)
            ]
            continue
        if _OPENS.match(line):
            opened = _reports(line)
        elif line.strip() and not _ITEM.match(line):
            opened = False
        found += [f for clause in _CLAUSE.split(line) if _reports(clause) for f in _files(clause)]
    return list(dict.fromkeys(found))


def _resolved(wanted: str, known: Sequence[str], written: Sequence[str]) -> str | None:
    """The path ``wanted`` (casefolded) is, of those the turn knows by its file's name: a
    tool's path written so, or the one tool's path that ends in it, or the one it ends in
    (written from the root), or else the one written path that ends in it; the deepest of
    a path written deeper and shallower; None when two paths answer."""
    exact = [p for p in known if p.casefold() == wanted]
    if exact:
        return exact[0]
    for pool, matches in (
        (known, lambda p: _ends(p.casefold(), wanted)),
        (known, lambda p: _ends(wanted, p.casefold())),
        (written, lambda p: _ends(p.casefold(), wanted)),
    ):
        ends = [p for p in pool if matches(p)]
        deepest = {
            p for p in ends if not any(o != p and _ends(o.casefold(), p.casefold()) for o in ends)
        }
        if len(deepest) == 1:
            return deepest.pop()
        if deepest:
            return None
    return None


def _unspaced(code: re.Match[str]) -> str:
    return " " if any(c.isspace() for c in code[1]) else f" {code[1]} "


def _reports(clause: str) -> bool:
    change = _CHANGED.search(clause)
    if change is None or not _not_denied(clause) or _TOLD_OF.search(clause):
        return False
    condition = _CONDITION.search(clause)
    return condition is None or condition.start() > change.start()


def _not_denied(clause: str) -> bool:
    return not (_NOT_MADE.search(clause) or _QUESTION.search(clause))


def _by_name(paths: Iterable[str]) -> dict[str, list[str]]:
    """Relative paths inside the project, each once, by their file's name (casefolded):
    none from the root or above it."""
    found: dict[str, list[str]] = {}
    for path in dict.fromkeys(file_name(p) for p in paths):
        if not _ABSOLUTE.match(path) and ".." not in path.split("/"):
            found.setdefault(_last(path.casefold()), []).append(path)
    return found


def _folders_of(path: str) -> list[str]:
    """``a/b/c.py`` → ``a``, ``a/b``."""
    parts = path.split("/")[:-1]
    return ["/".join(parts[: end + 1]) for end in range(len(parts))]


def _last(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _ends(path: str, name: str) -> bool:
    return path == name or path.endswith("/" + name)
