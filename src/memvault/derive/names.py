"""Names in text: whether a text names something as a whole word (``Names``), and the code
names a sentence writes (``code_names``), which is what a decision is about.

A code name is a name written as code: called (``foo()``), dotted (``Path.GetRandomFileName``,
``xterm.js``), or shaped like an identifier: a capital inside it after a small letter
(``CommandLineParser``), an underscore inside it (``retry_after``), a digit between letters
(``libgit2sharp``), an acronym opening a word (``HTTPServer``). Plain words are not:
"cache", "Python" and "httpx" look alike, and a request that said "cache" would find every
decision that did. What a decision chooses is the exception (``chosen_names``): the words
after its choice ("use a mock filesystem", ``USE "uv pip"``, "switch to pnpm", "使用Vue 3")
name the thing chosen, however plainly written.
"""

from __future__ import annotations

import functools
import re

from memvault.derive.code import calls
from memvault.derive.describe import ADDRESS, FILE_EXTENSIONS, address_name
from memvault.derive.failures import library_name, without_library_frames
from memvault.graph.model import NAME_LIMIT

MAX_NAMES = 8  # code names read from one sentence
REQUEST_NAMES = 8  # names read from one request (``request_names``)

_WORD = re.compile(r"@?[A-Za-z0-9_./-]+")
_NAME = re.compile(r"@?[A-Za-z_$][A-Za-z0-9_$]*(?:[./-][A-Za-z0-9_$]+)*")  # ASCII: 中文 ends a name
# Code-shaped: a capital after a small letter, an underscore or a digit inside, a dotted
# extension, or an acronym that opens a word (``HTTPServer``, ``IOException``; not a unit or
# an acronym made a word, ``MBps``, ``OAuth``, ``URLs``, ``ACKed``, ``SSHing``).
_SHAPED = re.compile(
    r"[a-z][A-Z]|[A-Z]{3,}(?!(?:s|es|ed|ing)\b)[a-z]{2}|[A-Za-z0-9]_[A-Za-z0-9]"
    r"|[A-Za-z]\d+[A-Za-z]|\w\w\.[A-Za-z]{2}"
)
_VERSION = re.compile(r"v?\d+(?:\.\d+)+")
# A file's name: its stem, a dot, an extension a project's files have (``StoreTests.cs``,
# ``inference.ipynb``; not ``requests.get``, ``csc.dll`` nor ``github.com``).
_FILE = re.compile(r"(.+)\.([A-Za-z0-9]{1,8})")
# A colour, a hash or an address (``E6A23C``, ``0x7f3a…`` read from its x): written like
# code, naming nothing. It holds a digit: ``feed`` and ``cafe`` are words.
_HEX = re.compile(r"x?(?=[A-Fa-f]*\d)[0-9A-Fa-f]+")
# An escaped line break in a pasted log (``\nTraceback``) is a break, not a letter.
_ESCAPE = re.compile(r"\\[nrt](?=[A-Z])")
# A test named after what it tests: ``StoreTests``, ``store_test``, ``test_store``, ``StoreSpec``,
# Go's ``TestStore_Get``.
_TESTED = (
    re.compile(r"(.{3,}?)(?:Tests?|Specs?)"),
    re.compile(r"(.{3,}?)[_-](?:tests?|specs?)"),
    re.compile(r"tests?_(.{3,})"),
    re.compile(r"Test([A-Z][A-Za-z0-9]{2,})(?:_\w*)?"),
)
# Kinds of test and a test framework's own parts, not what a test tests (``UnitTests``,
# ``integration_tests``, ``TestCase``, ``TestHelper``).
# fmt: off
_TEST_KINDS = frozenset({
    "unit", "integration", "e2e", "functional", "acceptance", "smoke", "all",
    "case", "suite", "runner", "helper", "helpers", "util", "utils", "base", "data", "fixture",
})
# fmt: on
# What a build makes or is made from, after an assembly's name (``ktsu.BlastMerge.Core.dll``).
_BUILT = frozenset({"dll", "exe", "pdb", "xml", "csproj", "fsproj", "vbproj", "sln", "nupkg"})


# What a decision chooses in plain words (``chosen_names``): the words after a choice verb,
# up to the first that ends a name (a preposition, a conjunction, punctuation, a CJK
# character), at most CHOSEN_WORDS of them; a quoted choice whole.
CHOSEN_WORDS = 3
_CHOICE = re.compile(
    r"(?:\b(?:use|using|switch(?:ed)? to|migrate to|move to|adopt|go with|stick with|"
    r"standardi[sz]e on|replace\b[^.;:!?]{1,60}?\bwith)\b|使用|改用|改为|改為|换成|換成|采用|採用)"
    r"\s*",
    re.IGNORECASE,
)
_LISTING = frozenset({"+", "和", "与", "與", "及", "以及", "、"})  # between two choices
_QUOTED_CHOICE = re.compile(r"[\"'`“‘]([^\"'`”’\n]{2,40})[\"'`”’]")
_CHOSEN_WORD = re.compile(r"([A-Za-z0-9][A-Za-z0-9.#+_-]*)(\S*)")
# fmt: off
# Before the thing chosen: an article or a word that points at something said before
# ("use this": no name).
_BEFORE_CHOSEN = frozenset({"a", "an", "the", "our", "my", "your", "its", "their", "some"})
_POINTING = frozenset({
    "it", "this", "that", "these", "those", "them", "one", "what", "which", "whatever",
    "something", "anything", "everything", "only", "just", "always", "more", "less",
    "following", "above", "below", "same", "former", "latter", "either", "both",
})
# Words that end the thing chosen: what follows says what for, how, or instead of what.
_AFTER_CHOSEN = frozenset({
    "instead", "rather", "for", "to", "so", "in", "on", "at", "with", "when", "because",
    "or", "not", "than", "as", "over", "from", "which", "that", "if", "across", "throughout",
    "by", "of", "is", "are", "be", "where", "wherever", "whenever", "everywhere", "here",
    "there", "now", "too", "also", "again", "then", "but", "like", "via", "until", "unless",
    "while", "all", "any", "each", "every", "either", "only", "please",
})
# What only qualifies the thing chosen ("a different approach", "the latest version"): a
# choice of such words alone names nothing.
_QUALIFIERS = frozenset({
    "different", "new", "newer", "other", "own", "latest", "simple", "simpler", "better",
    "best", "same", "proper", "separate", "single", "existing", "current", "default",
    "cleaner", "clean", "good", "nice", "modern", "more", "less", "up", "off", "out", "down",
    "few", "very", "such", "right", "correct", "appropriate", "suitable", "specific",
})
# A kind of thing after its name ("the CommandLineParser library"): the name is the choice.
_KIND_OF_THING = frozenset({
    "library", "libraries", "package", "packages", "framework", "frameworks", "tool",
    "tools", "module", "modules", "approach", "pattern", "patterns", "method", "methods",
    "version",
})
# fmt: on
# A word that tells of the thing chosen rather than naming it ("CONSTANTS defined in …").
_TOLD_OF = re.compile(r"[a-z]{3,}ed")
_PLAIN = re.compile(r"[A-Za-z][A-Za-z-]*")


class Names:
    """What a text names, read once: every word made of path characters (ASCII letters,
    digits, ``_ . / -``, a leading ``@``), and each word's beginning up to a dot. Other
    text (CJK, spaces, punctuation, a backslash) separates names: ``决定改用httpx替换requests``
    names httpx, and ``packages\\commandlineparser\\2.9.1`` names commandlineparser. With
    ``parts``, each part of a path or a dotted name names too (``packages/commandlineparser``
    names commandlineparser, ``at Blast.Core.ParallelHasher.Run()`` names ParallelHasher):
    what a request names, where an entity's file is named by its whole path; a path, written
    with slashes or backslashes, also names each of its folders and every tail of it
    (``C:\\app\\src\\session\\store.ts`` names ``store.ts``, ``session/store.ts`` and
    ``src/session/store.ts``)."""

    __slots__ = ("_lowered", "parts", "text", "words")

    def __init__(self, text: str, *, parts: bool = False) -> None:
        self.text = text
        self.parts = parts
        self._lowered = text.lower().replace("\\", "/") if parts else text.lower()
        words = set(_WORD.findall(self._lowered))
        if parts:
            split = [p for w in words if "/" in w or "." in w for p in re.split(r"[/.]", w)]
            words.update(p for p in split if p)
            paths = [[p for p in w.split("/") if p] for w in words if "/" in w]
            words.update(p for path in paths for p in path)  # each folder and the file
            words.update("/".join(path[-k:]) for path in paths for k in range(2, len(path) + 1))
        for word in [w for w in words if "." in w]:
            dot = word.find(".", 1)
            while 0 < dot <= NAME_LIMIT:  # no name is longer
                words.add(word[:dot])
                dot = word.find(".", dot + 1)
        self.words = words

    def names(self, name: str) -> bool:
        """Whether the text names ``name`` as a whole word (case aside)."""
        if len(name) < 2:
            return False
        if _WORD.fullmatch(name):
            return name.lower() in self.words
        # A name with other characters (a space, a non-ASCII letter): looked for in full;
        # with ``parts``, as the tail of a path too.
        if name.lower() not in self._lowered:
            return False
        before = "A-Za-z0-9_.-" if self.parts else "A-Za-z0-9_/.-"
        pattern = rf"(?<![{before}]){re.escape(name.lower())}(?![A-Za-z0-9_/-])"
        return re.search(pattern, self._lowered) is not None


@functools.lru_cache(maxsize=4096)
def code_names(sentence: str) -> tuple[str, ...]:
    """``written_names`` of a decision's sentence, kept: a project's decisions are read
    again whenever one of its fragments changes."""
    return written_names(sentence)


def written_names(sentence: str, *, besides: str | None = None) -> tuple[str, ...]:
    """The code names ``sentence`` writes, each once, in the order written, at most
    ``MAX_NAMES``; a dotted name also by its last part when that is code-shaped itself
    (``Path.GetRandomFileName`` gives ``GetRandomFileName``). A call is one when its name
    is (``reset()`` is a plain word called). With ``besides`` (a project), none that is
    that project's own (``of_project``) counts. Read afresh each time: a request, read
    once, is not kept."""
    sentence = _addresses_named(without_library_frames(sentence))
    found = [w for w in [*calls(sentence), *_NAME.findall(sentence)] if _code_shaped(w)]
    names: list[str] = []
    for name in found:
        name = name.lstrip("@").rstrip(".-/")
        for each in _said_by(name):
            if besides and of_project(each, besides):
                continue
            if len(each) >= 3 and each.casefold() not in {n.casefold() for n in names}:
                names.append(each)
        if len(names) >= MAX_NAMES:
            break
    return tuple(names[:MAX_NAMES])


def _said_by(name: str) -> tuple[str, ...]:
    """The names a written name says a thing by: itself, and a dotted name also its last
    part when that is code-shaped (``Path.GetRandomFileName``, ``GetRandomFileName``); a
    path its file's name as ``file_names`` gives it (``src/db/PoolManager.ts``,
    ``PoolManager.ts``; ``src/app.py`` alone)."""
    if "/" in name:
        return (name, *(n for n in file_names(name) if "/" not in n))
    last = name.rsplit(".", 1)[-1]
    return (name, last) if last != name and _SHAPED.search(last) else (name,)


def _addresses_named(sentence: str) -> str:
    """``sentence`` with each address written as what it names: a repository's or a
    package's by its name (``derive.describe.address_name``: "use
    https://github.com/ktsu-dev/AppDataStorage" is about ``AppDataStorage``), any other
    address by nothing (a host is no name of the thing)."""
    return ADDRESS.sub(lambda m: f" {address_name(m[1], m[2]) or ''} ", sentence)


def request_names(text: str, *, besides: str | None = None) -> tuple[str, ...]:
    """The names a request writes that a session's tools would have touched, each once, in
    the order written, at most ``REQUEST_NAMES``: a file's name without its folders or its
    extension (``C:\\src\\App.Test\\StoreTests.cs`` gives ``StoreTests``; a plain one too,
    ``inference.ipynb`` gives ``inference``), each code-shaped part of a dotted name
    (``Assert.AreEqual`` gives ``AreEqual``), and after a test's name what it tests
    (``StoreTests`` and ``test_store`` give ``Store`` and ``store``): a test failure is
    fixed in the code under test. Not what a build makes (``csc.dll``), a frame of the
    language's or a library's own (``/usr/lib/python3.11/runpy.py``,
    ``System.RuntimeMethodHandle``), nor, with ``besides`` (a project), the project's own
    name (``of_project``: ``BlastMerge``)."""
    found: list[str] = []
    text = without_library_frames(text)
    for written in _NAME.findall(_ESCAPE.sub(" ", text).replace("\\", "/")):
        written = written.lstrip("@").rstrip(".-/")
        last = written.rsplit("/", 1)[-1]
        if len(last) > NAME_LIMIT or library_name(written):
            continue
        file = _FILE.fullmatch(last)
        if file and file.group(2).lower() not in FILE_EXTENSIONS:
            file = None
        parts = (file.group(1) if file else last).split(".")
        # A file is named by its stem's first part when no later part is code:
        # ``vite.config.ts`` by vite, ``ktsu.BlastMerge.Test.dll`` by BlastMerge.
        plain = bool(file) and not any(_code_shaped(part) for part in parts[1:])
        for i, part in enumerate(parts):
            if len(part) < 3 or _HEX.fullmatch(part):
                continue
            if not (_code_shaped(part) or (plain and i == 0)):
                continue
            if besides and of_project(part, besides):
                continue
            found.append(part)
            tested = next((m for pattern in _TESTED if (m := pattern.fullmatch(part))), None)
            if tested and tested.group(1).casefold() not in _TEST_KINDS:
                found.append(tested.group(1))
    names: dict[str, str] = {}
    for name in found:
        names.setdefault(name.casefold(), name)
    return tuple(names.values())[:REQUEST_NAMES]


def of_project(name: str, project: str) -> bool:
    """Whether ``name`` is the project's own rather than something in it: the project's
    name (``BlastMerge``, ``blast_merge``), or a dotted name whose parts after the
    project's are its assemblies and their build outputs, as a build log writes them
    whatever failed (``BlastMerge.Core``, ``ktsu.BlastMerge.Test.dll``,
    ``BlastMerge.Core.csproj``). A module (``memvault.store.sqlite``), a source file named
    after the project (``app.py`` in ``app``) or a namespace ending in it (``Foo.Core`` in
    ``core``) is something in it. A path is read by its file's name."""
    own = name.rsplit("/", 1)[-1]
    if same_name(own, project):
        return True
    parts = own.split(".")
    at = next((i for i, part in enumerate(parts) if part and same_name(part, project)), None)
    if at is None or at == len(parts) - 1:
        return False
    return all(p[:1].isupper() or p.lower() in _BUILT for p in parts[at + 1 :])


def file_names(path: str) -> tuple[str, ...]:
    """The name a request names a file by: its own name when what comes before its first
    dot is code-shaped (``SecureTempFileHelper.cs``, ``eastmoney_strategy.py``), else its
    whole path (``src/session/store.ts``), since "store.ts", "index.test.ts" and
    "vite.config.ts" are in many folders; nothing for such a name with no folder."""
    found = [p for p in re.split(r"[/\\]+", path.strip().strip("`")) if p not in ("", ".")]
    if not found:
        return ()
    name = found[-1]
    if _SHAPED.search(name.split(".", 1)[0]):
        return (name,)
    return ("/".join(found),) if len(found) > 1 else ()


def same_name(a: str, b: str) -> bool:
    """Whether two names are one whatever separates their words and however they are
    cased (``twat_search``, ``twat-search``, ``TwatSearch``)."""
    return _bare(a) == _bare(b)


def _bare(name: str) -> str:
    return re.sub(r"[\W_]+", "", name).casefold()


def _code_shaped(word: str) -> bool:
    return bool(_SHAPED.search(word)) and not _VERSION.fullmatch(word.lstrip("@"))


@functools.lru_cache(maxsize=4096)
def chosen_names(sentence: str) -> tuple[str, ...]:
    """What a decision's ``sentence`` chooses (or, said with "don't", rules out), in the
    words it says it by: the words after each choice verb ("use", "switch to", "go with",
    "standardize on", "replace … with", "使用", "改用", …), without an article or a word
    that only qualifies before them ("a different") or a kind of thing after them, up to
    the first word that says what for or instead of what, at most ``CHOSEN_WORDS``; a quoted
    choice whole (``USE "uv pip"``); a list of choices each ("Vue 3 + Naive UI", "Vue3 和
    Pinia"). Nothing for a choice that points at something said before ("use this")."""
    found: list[str] = []
    for verb in _CHOICE.finditer(sentence):
        rest = _ESCAPE.sub(" ", sentence[verb.end() :])
        quoted = _QUOTED_CHOICE.match(rest)
        choices = [quoted[1]] if quoted else _chosen_words(rest)
        for choice in choices:
            for part in re.split(r"\s+\+\s+|\s+and\s+|\s*,\s*", choice):
                words = part.split()
                while words and words[-1].lower() in _KIND_OF_THING:
                    words.pop()
                while words and words[0].lower() in _QUALIFIERS:
                    words.pop(0)
                if any(len(w) > 1 and re.search("[A-Za-z]", w) for w in words):
                    found.append(" ".join(words))
    return tuple(dict.fromkeys(found))


def _chosen_words(rest: str) -> list[str]:
    """The choices that open ``rest`` (what follows a choice verb): runs of plain words,
    ended by a word that ends a choice, punctuation or a CJK character; "+" and "and" go on
    to the next choice."""
    choices: list[list[str]] = [[]]
    for written in rest.split(None, 12):
        word = _CHOSEN_WORD.match(written)
        if word is None:
            if written in _LISTING and choices[-1]:
                choices.append([])
                continue
            break
        name, after = word[1].rstrip(".-"), word[2]
        lowered = name.lower()
        if not any(choices) and lowered in _BEFORE_CHOSEN and not after:
            continue
        if lowered == "and" and choices[-1]:
            choices.append([])
            continue
        if lowered in _AFTER_CHOSEN or (not choices[-1] and lowered in _POINTING):
            break
        if choices[-1] and _TOLD_OF.fullmatch(lowered):  # "CONSTANTS defined in …"
            break
        choices[-1].append(name)
        if len(choices[-1]) >= CHOSEN_WORDS or (after and after != "+"):
            break
    return [" ".join(words) for words in choices if words]


def plain_word(name: str) -> bool:
    """Whether ``name`` is one plain word ("mstest", "cache"), not code-shaped: a word
    that, unlike a code name, may be common where it is said."""
    return bool(_PLAIN.fullmatch(name)) and not _code_shaped(name)
