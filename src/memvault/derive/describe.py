"""A fragment's description: the few words its file name carries, what it is about.

A fragment is named ``{project} - {YYYY-MM-DD} - {description}.md`` (fragments spec, item
1), and a name is read in a list, so its description is short: at most 8 words and 60
characters (a Chinese character counts as two). It is made from the fragment's title when
it has one (a pitfall's command and error, an LLM's title), else from the leading clause of
its summary's first sentence, stripped of what only adds noise to a name: lead-ins ("The
issue is that", "Let me"), labels ("Decision:", "Error:"), code quotes and brackets, IP
addresses and ports, times, hashes, line numbers and stack frames, and paths (reduced to
their file's stem: ``src/db/pool.js:14`` is ``pool``). Pure text, no LLM; the name's own
safety (no ``\\ / : * ? " < > |``, no trailing dot) is ``vault.fragments.fragment_name``'s.
"""

from __future__ import annotations

import re
import unicodedata

from memvault.derive import cues

MAX_WORDS = 8
MAX_WIDTH = 60  # characters, a wide (CJK) character counting as two
# What is read of a text: a name's words come from its start, and a bound keeps every
# pattern below quick on whatever a log line holds.
READ_LIMIT = 240

# The extensions of files a project holds (source, documents, configuration, data): what
# makes ``name.ext`` a file's name rather than a dotted one (``requests.get``, ``csc.dll``).
# fmt: off
FILE_EXTENSIONS = frozenset({
    "py", "pyi", "ipynb", "js", "mjs", "cjs", "jsx", "ts", "tsx", "vue", "svelte", "go", "rs",
    "java", "kt", "kts", "scala", "groovy", "swift", "c", "h", "cc", "cpp", "cxx", "hpp", "hh",
    "m", "mm", "cs", "fs", "vb", "csproj", "fsproj", "vbproj", "sln", "props", "rb", "php",
    "pl", "lua", "r", "jl", "dart", "ex", "exs", "erl", "hs", "ml", "clj", "sh", "bash", "zsh",
    "ps1", "psm1", "bat", "cmd", "sql", "md", "mdx", "rst", "txt", "json", "jsonc", "jsonl",
    "yaml", "yml", "toml", "ini", "cfg", "conf", "env", "lock", "xml", "html", "htm", "css",
    "scss", "sass", "less", "log", "csv", "gradle", "proto", "graphql", "tf",
})
# fmt: on
ADDRESS = re.compile(r"\b(?:https?|ftp|file)://([^\s/)\]>\"'`]+)([^\s)\]>\"'`]*)", re.IGNORECASE)
# Where a code host's or a package registry's address names a repository or a package: at
# this place in its path (``github.com/<owner>/<repo>/…``, ``pypi.org/project/<name>/…``,
# ``packagist.org/packages/<vendor>/<name>``, the last of ``pkg.go.dev/…/<module>@v1``).
# Such an address is described, and named as code, by that name, not by the host every such
# address shares; any other by its host.
# fmt: off
_NAMED_AT = {
    "github.com": 1, "gitlab.com": 1, "bitbucket.org": 1, "codeberg.org": 1, "git.sr.ht": 1,
    "sr.ht": 1, "pypi.org": 1, "npmjs.com": 1, "crates.io": 1, "nuget.org": 1,
    "rubygems.org": 1, "hex.pm": 1, "pub.dev": 1, "packagist.org": 2, "pkg.go.dev": -1,
}
# fmt: on
# A path (``src/db/pool.js:14``, ``C:\dev\App\Foo.cs``, ``node:internal/x/y:95:5``) or a
# dotted name, which ``_stem`` reduces to the file's stem when it ends in a known extension
# (``config.py``).
_PATH = re.compile(
    r"(?:[A-Za-z]:\\|[~.]{0,2}[/\\]|@)?(?:[\w@.+-]+[/\\])+(?P<last>[\w@.+-]*)(?::\d+)*"
    r"|\b(?P<file>[\w@+-]+(?:\.[\w-]+)+)(?::\d+)*",
    re.IGNORECASE,
)
_EXTENSION = re.compile(rf"\.(?:{'|'.join(sorted(FILE_EXTENSIONS))})$", re.IGNORECASE)
_NOISE = re.compile(
    r"\s*\(\s*version\s+\d+(?:\.\d+)+\s*\)"  # "X (version 18.0.0.0)" is X
    r"|\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
    r"|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"  # a time of day, to the second
    r"|\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b|\[?::[\da-f:]*\]?(?::\d+)?"  # IP addresses, ports
    r"|\blocalhost:\d+\b"
    r"|\b0x[\da-f]+\b|\b[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}\b"
    r"|\b(?=[a-f]*\d)[\da-f]{10,}\b"  # hashes and ids
    r"|\b(?:on |at |around |near )?lines? \d+(?:\s*[-–]\s*\d+)?(?::\d+)?\b"  # line numbers
    r"|\bL\d+(?:-L?\d+)?\b|\bpid \d+\b"
    r"|\s+at\s+[\w.$<>\[\]]+\s*\([^)]*\)"  # a stack frame: at PgPool.connect (src/db/pool.js:14)
    r"|\b(?:process |command )?(?:exited|completed|failed) with (?:a )?(?:non-zero )?"
    r"(?:exit |status )?(?:code|status) -?\d+\b",  # says no more than "failed"
    re.IGNORECASE,
)
# Generic labels before the words that matter (``Error: connect …``); a named error
# (``TypeError: …``) keeps its name.
_LABEL = re.compile(
    r"(?:^|(?<=[(\[（])|(?<=\bwith )|(?<=失败 ))"
    r"(?:error|warning|fatal|exception|note|decision|decided|lesson|finding|conclusion|"
    r"summary|root cause|fix|fixed|cause|pitfall|data|结论|結論|根因(?:分析)?|"
    r"决定|決定|决策|決策|原因|教训|教訓|经验|經驗|问题|問題|注意)\s*[:：]\s*",
    re.IGNORECASE,
)
_LEAD_IN = re.compile(
    r"^(?:(?:now that i understand the problem(?: better)?|now|so|ok(?:ay)?|actually|"
    r"basically|great|in conclusion|but|and|however)\b[,:]?\s*"
    r"|(?:similarly|additionally|also|finally|first|then|from (?:your|the|this) (?:output|logs?"
    r"|errors?|traceback)),\s*)*"
    r"(?:(?:i (?:can |could |also |now )*see|i found|i think|i believe|i notice|"
    r"it (?:seems|looks) like)\b(?: (?:in|from) [^,.;:]{1,40}? that\b)?,?\s*(?:that\s+)?)?"
    r"(?:(?:the|this|that) (?:main |root |real |actual |core )?(?:issue|problem|bug|cause|"
    r"culprit|reason|error)(?: here)? (?:is|was) (?:(?:most )?likely |probably |simply "
    r"|actually |really |just )?(?:that\b:?\s*|related to\s+|(?=there (?:is|are|was|were)\b)"
    r"|(?=an? \w))"
    r"|this is because\s+|(?:let's|let me|let us|i'll|i will|i need to|we need to|"
    r"i'm going to|we should|(?:can|could|would|will) (?:we|you)(?: please)?|please)\s+"
    # a change reported: "I've successfully refactored …" reads "Refactored …"
    r"|(?:i've|i have|we've|we have) (?:now |just |also )*(?:successfully )?(?=\w+ed\b))?",
    re.IGNORECASE,
)
# A contrast that opens a sentence ("Instead of this complex algorithm, let me use a simpler
# approach …"): what the sentence chooses is after its comma.
_CONTRAST_OPENING = re.compile(r"^(?:instead of|rather than)\b[^,;()]{1,80},\s*", re.IGNORECASE)
# A verdict that says nothing of what it judges ("This is much better - I'll integrate …"):
# the clause after it says what.
_VERDICT = re.compile(
    r"^(?:(?:this|that|it|the (?:issue|problem)) (?:is|was|looks|seems|sounds)|looks|sounds)"
    r" (?:much |a lot |far |even |way )?(?:better|good|great|cleaner|simpler|nicer|"
    r"interesting|clear|correct|fine|right|reasonable|tricky|subtle)(?: now)?"
    r"\s*(?:[-—–:;,.!]+\s*|\s(?:because|since)\s+)",
    re.IGNORECASE,
)
# How the finding was reached, before it: "经过详细分析，", "查看了代码后，", "从错误日志中，".
_ZH_LEAD_IN = re.compile(
    r"^(?:(?:经过|經過|根据|根據|基于|基於|通过|通過|从|從)[^，,。：:]{1,16}"
    r"|(?:查看|检查|檢查|分析)了?[^，,。：:]{0,8}后?)[，,]\s*"
    # An assent, "I (now) see / found / notice", "the problem is that": what follows is it.
    r"|^(?:是的|确实|確實|好的)[，,]\s*"
    r"|^(?:(?:现在|現在)?我(?:发现|發現|注意到|看到)了?(?!的)"
    r"|(?:问题|問題|原因|根本原因)(?:在于|在於))[，,：:]?\s*"
)
# A Chinese clause that only says where the statement is, in general words (在项目中，…; not
# 在Windows上，…), or that what follows is it (这段话的意思是：…, 原因如下：…): the clause
# after it is the statement.
_ZH_SETTING = re.compile(
    r"^(?:在|从|從|对于|對於|关于|關於)[^，,。A-Za-z]{0,14}(?:中|里|裡|内|內|内部|內部|上|下|时|時|后|後)$"
    r"|(?:的意思是|意思是|是|在于|在於|如下)$"
)
# "The issue is in X" / "The problem was with X": a title reads "Issue in X"; "The issue is
# on line 727 where X", its line number gone, reads "Issue where X".
_WHERE_ISSUE = re.compile(
    r"^(?:the|this) (?:main |root |real )?(issue|problem|bug) (?:is|was)\s+"
    r"(?:(?:most )?likely |probably |somewhere |specifically |actually |mainly |also )?"
    r"(in|with|on|at|where)\b",
    re.IGNORECASE,
)
# Where a sentence's leading clause ends: a semicolon, a dash, a CJK comma or colon, or a
# comma or word that opens a reason or a second clause.
_CLAUSE_END = re.compile(
    r"\s*[;；]|\s+[—–]\s+|\s-\s|[，：。！？]|:\s"
    r"|,?\s+(?:which|because|since|so that|whereas|while|where|but|although)\b"
    r"|,?\s+so (?:we|you|i|it|they) (?:can|could|will|would|may|might)\b"
    r"|,\s+(?:so|and then|then)\b",
    re.IGNORECASE,
)
_SOUP = re.compile(
    r"[`*~\"“”‘’«»()\[\]{}<>|=#^$%&;:,!?@\\/+（）【】「」『』《》〈〉：]+"
    r"|(?<!\w)['_]+|['_]+(?!\w)|\.{2,}|…+"
)
_EMPHASIS = re.compile(r"\*\*|(?<!\w)__|__(?!\w)")
# A relative clause whose antecedent was only symbols ("The issue is likely with `⚙️` which
# is a compound emoji"): the preposition takes what the clause says.
_EMPTIED = re.compile(
    r"^((?:issue|problem|bug)\s+(?:in|with|on|at))\s+(?:which|that)\s+(?:is|are|was|were)\b",
    re.IGNORECASE,
)
_SHORT_FLAG = re.compile(r"(?<!\S)-\w\b")
_ARTICLES = frozenset({"a", "an", "the"})
# The last part of a dotted name that names something alone (``StartIterativeMergeProcess``,
# ``TestingHelpers``; not ``exe``, ``get``).
_NAMED_PART = re.compile(r"(?=\w*[A-Z_])\w{4,}")
# Words a description never ends on: it stops at a word that needs another after it.
_DANGLING_WORDS = (
    "a an the to of for with and or but in on at by from into than instead rather is are "
    "was were be been being that this these those which who whose when where while as "
    "via its their our your my his her around near about over under after before because "
    "between among across through within without against "
    "so if not no than then until since unless "
    "的 了 和 与 與 或 在 把 将 將 为 為 是 由 从 從"
)
_DANGLING = frozenset(_DANGLING_WORDS.split())
# A verb a name cannot end on without its object ("… to use", "… created using", "… let
# me"): not the noun ("memory use").
_UNFINISHED = re.compile(
    r"\s+(?:(?:to|and|let (?:me|us)|lets) (?:use|using)|using|let (?:me|us)|lets)$", re.IGNORECASE
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def describe(summary: str, *, title: str | None = None) -> str:
    """The description a fragment's file name carries: its ``title`` reduced, when one
    is given and anything is left of it, else the leading clause of ``summary``'s first
    sentence; empty when neither says anything."""
    for text, whole in ((title, True), (_first_sentence(summary), False)):
        if text:
            described = _reduced(text, whole=whole)
            if described:
                return described
    return ""


def _first_sentence(summary: str) -> str:
    said = cues.sentences((summary or "")[: READ_LIMIT * 4])
    return said[0] if said else (summary or "").strip()


def _reduced(text: str, *, whole: bool) -> str:
    text = unicodedata.normalize("NFC", " ".join(text[: READ_LIMIT * 2].split()))[:READ_LIMIT]
    text = ADDRESS.sub(lambda m: f" {_address(m[1], m[2])} ", text)
    text = _NOISE.sub(" ", text)
    text = _PATH.sub(_stem, text)
    text = _EMPHASIS.sub("", text)  # "**根因分析**：…" is labelled as plainly as "根因分析：…"
    text = _LABEL.sub("", text)
    text = cues.statement(text)
    for opening in (_CONTRAST_OPENING, _VERDICT):
        rest = opening.sub("", text, count=1)
        if rest != text and len(_words(rest)) >= 4:  # what is chosen or judged, if said
            text = rest[:1].upper() + rest[1:]
    stripped = text
    for _ in range(3):  # 经过检查，我发现… : one lead-in after another
        stripped, found = _ZH_LEAD_IN.subn("", stripped, count=1)
        if not found:
            break
    stripped = _LEAD_IN.sub("", stripped, count=1)
    stripped = _WHERE_ISSUE.sub(lambda m: f"{m[1].capitalize()} {m[2]}", stripped, count=1)
    if stripped != text and (len(_words(stripped)) >= 3 or len(_CJK.findall(stripped)) >= 4):
        # A lead-in goes only when it leaves something to say; what is left opens the name.
        text = stripped[:1].upper() + stripped[1:]
    if not whole:
        text = _leading_clause(text)
    text = _SHORT_FLAG.sub(" ", text)
    text = _SOUP.sub(" ", text)
    return _bounded(_words(_EMPTIED.sub(r"\1", " ".join(_words(text)))))


def _address(host: str, path: str) -> str:
    """An address as a description says it: by what it names (``address_name``), else by
    its host (``docs.python.org``)."""
    return address_name(host, path) or host.lower().removeprefix("www.")


def address_name(host: str, path: str) -> str | None:
    """The repository or package a code host's or a package registry's address names
    (``AppDataStorage`` for ``github.com/ktsu-dev/AppDataStorage/tree/main``, ``httpx`` for
    ``pypi.org/project/httpx/0.27.0``); None for any other address."""
    at = _NAMED_AT.get(host.lower().split(":", 1)[0].removeprefix("www."))
    parts = [p for p in re.split(r"/+", re.split(r"[?#]", path, maxsplit=1)[0]) if p]
    if at is None or not parts:
        return None
    if "-" in parts[1:]:  # GitLab's ``<group>/<subgroup>/<repo>/-/…``
        at = parts.index("-") - 1
    elif at < len(parts) - 1 and parts[at].startswith("@"):  # an npm package's scope
        at += 1
    if at >= len(parts):
        return None
    return parts[at].split("@", 1)[0].removesuffix(".git") or None


def _stem(match: re.Match[str]) -> str:
    """A path as its file's stem: ``src/db/pool.js:14`` → ``pool``; a folder's own name
    when the path ends in one (``src/api/`` → ``api``)."""
    if match["file"] and not _EXTENSION.search(match["file"]):
        return match[0]  # a dotted name (``PgPool.connect``, ``2.8.3``), not a file
    name = match["file"] or match["last"] or ""
    if not name:
        parts = [p for p in re.split(r"[/\\]", match[0]) if p.strip(".~@:")]
        name = parts[-1] if parts else ""
    name = re.sub(r"(?::\d+)+$", "", name)
    while _EXTENSION.search(name):
        name = _EXTENSION.sub("", name)
    return f" {name.strip('.@')} "


def _leading_clause(text: str) -> str:
    """``text`` up to where its first clause ends, when that clause says enough on its own
    (four words, or four Chinese characters, and not only where or what follows: 在项目中，…,
    这段话的意思是：…); else the whole of it."""
    start = 0
    for match in _CLAUSE_END.finditer(text):
        head = text[start : match.start()]
        if _ZH_SETTING.search(head.strip()):
            start = match.end()
            continue
        if len(_words(_SOUP.sub(" ", head))) >= 4 or len(_CJK.findall(head)) >= 4:
            return head
    return text[start:] if _words(text[start:]) else text


def _words(text: str) -> list[str]:
    return [w for w in text.split() if any(c.isalnum() for c in w)]


def _width(word: str) -> int:
    return len(word) + len(_CJK.findall(word))


def _bounded(words: list[str]) -> str:
    """At most ``MAX_WORDS`` words and ``MAX_WIDTH`` wide, not ending on a word that needs
    another after it; a long run of Chinese is cut to the room left. Articles go first
    when there are too many words."""
    if len(words) > MAX_WORDS:
        words = words[:1] + [w for w in words[1:] if w.lower() not in _ARTICLES]
    kept: list[str] = []
    width = 0
    for word in words:
        room = MAX_WIDTH - width - (1 if kept else 0)
        if len(kept) == MAX_WORDS or room <= 0:
            break
        if _width(word) > room:
            tail = word.rsplit(".", 1)[-1]
            if "." in word.strip(".") and _NAMED_PART.fullmatch(tail) and _width(tail) <= room:
                word = tail  # a long dotted name by its own last part, when that names
            elif _CJK.search(word):
                kept.append(_cut_wide(word, room))
                break
            else:
                break
        kept.append(word)
        width += _width(word) + (1 if len(kept) > 1 else 0)
    while len(kept) > 1:  # what is left ends on a word that needs another after it
        if kept[-1].lower().strip("'") in _DANGLING:
            kept.pop()
        elif len(kept) > 2 and (unfinished := _UNFINISHED.search(" ".join(kept))):
            kept = " ".join(kept)[: unfinished.start()].split()  # "… to use", "… let me"
        else:
            break
    return " ".join(kept).strip(" -")


def _cut_wide(word: str, room: int) -> str:
    cut, width = "", 0
    for char in word:
        width += _width(char)
        if width > room:
            break
        cut += char
    return cut
