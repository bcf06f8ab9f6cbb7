"""`files` questions from requests the coding-sessions set never asks, by its card's rule.

The set (``../shared/bench/coding-sessions/``) asks the later 40 % of each project's
sessions; every figure memvault was tuned by comes from its 25 requests over the first 60 %.
This script labels the requests of the sessions after the first ``--history-share`` (0.4
unless told: a history the set never had) up to ``--until`` (all of them unless told), as the
card labels `files` questions, without an LLM and without reading anything memvault derives.
Most of its questions are requests the set does not ask (at the card's split too):

- the request is specific: at least 5 words (Chinese: 8 characters) and a project-specific
  term (an identifier, a file name, a backticked name, or a word, or a Chinese character
  pair, that 1 to 35 % of the project's other sessions use and, for an English word, at
  most half of the other projects);
- the files its work touched (the paths its tools opened in its turn and the next, and the
  files its requests and replies there mention, each keyed as written: ``parent/name`` or
  the bare name) link it to a history session that touched or mentioned them too, when
  they are source files that at most 20 % of the project's sessions touch, or documents
  that at most 3 touch or the request names; rule, task-list and config files never link,
  and a name counts only if the repository committed such a file;
- the two sessions' titles share a word (stemmed) that is not generic and is in at most
  15 % of the project's titles; at most 5 relevant sessions, by an idf-weighted cosine of
  the two sessions' linking files (+1 for the titles); at most 6 requests of a session,
  each with other relevant sessions than the ones before it.

A later session without a usable title is not asked (the card asks it when files alone
overlap strongly). Read against the card's own labels at its split, it asks 21 of its 25
questions (19 alike) and 14 more.

The set's 60 controls are kept as they are (another project's request is irrelevant under
any split). It writes ``OUT/queries.json`` beside a link to the set's ``sessions.jsonl``;
ask them with the same split:

    .venv/bin/python bench/wider_files.py OUT [--data DIR] [--history-share 0.4] [--until 1.0]
    .venv/bin/python bench/real_sessions.py --data OUT --history-share 0.4 [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path, PurePosixPath

sys.path.insert(0, str(Path(__file__).parent))

from real_sessions import DATA, by_project, need_data, share_option, split, written


def stem(word: str) -> str:
    """A word without its plainest English endings ("loops", "simplifying" → "loop",
    "simplify"): titles agree on a word however it is inflected. Not memvault's analyzer,
    on purpose: the labels judge memvault's search and read nothing of how it reads."""
    for ending in ("ing", "ed", "es", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


SOURCE = {
    ".py", ".cs", ".js", ".ts", ".tsx", ".jsx", ".vue", ".scss", ".css", ".html", ".ps1",
    ".psm1", ".go", ".rs", ".java", ".kt", ".rb", ".php", ".c", ".h", ".cpp", ".hpp",
    ".swift", ".sh", ".ipynb", ".sql",
}  # fmt: skip
DOCUMENT = {".md", ".txt", ".rst"}
NEVER = re.compile(
    r"(^|/)\.(cursor|github|vscode|claude|specstory)/|\.mdc$|(^|/)(todo|progress|tasks|agents"
    r"|claude|plan|cleanup|changelog|llms|readme)\.(md|txt)$|\.(json|toml|ya?ml|lock|ini|cfg"
    r"|csproj|sln|props|targets|env)$|(^|/)[^/]*config[^/]*\.(js|mjs|cjs|ts|py)$"
    r"|(^|/)settings\.py$",
    re.IGNORECASE,
)
SOURCE_SHARE = 0.20  # a source file links if at most this share of the sessions touch it
DOCUMENT_SESSIONS = 3  # a document links if at most this many sessions touch it
TERM_SHARE = (0.01, 0.35)  # a project-specific word: this share of the other sessions use it
TITLE_SHARE = 0.15  # a title word in more of the project's titles agrees on nothing
RELEVANT = 5
LATER_REQUESTS = 6  # asked of each session at most, as the card's questions
FOLLOW_UP = re.compile(
    r"\s*(ok(ay)?\b|now\b|and\b|also\b|what about\b|then\b|continue\b|/\w|继续|好的|那)", re.I
)
GENERIC = {
    stem(word)
    for word in re.findall(
        r"\w+",
        """fix fixing fixed error errors issue issues bug bugs implement implementing
        implementation add adding update updating project code file files create creating
        improve improving test tests testing new use using help request task tasks change
        changes make making check review setup support feature features problem problems
        troubleshooting troubleshoot method methods failure failures codebase analysis
        analyze and for the with from into of in on to a an how what why""",
    )
} | {"问题", "解决", "分析", "建议", "优化", "项目", "修复", "实现", "功能", "检查", "错误", "需求"}
IDENTIFIER = re.compile(
    r"`[^`\n]{2,60}`|\b[A-Za-z_][\w]*\.[A-Za-z]{1,5}\b|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z0-9]+[A-Z]\w*"
    r"|\b[a-z0-9]+_[a-z0-9_]+\b"
)
WORD = re.compile(r"[a-z][a-z0-9]{3,}")
TITLE_WORD = re.compile(r"[a-z][a-z0-9]{2,}")
FILE_NAME = re.compile(r"[\w./\\@-]+\.[A-Za-z]{1,5}\b")
CJK = re.compile(r"[\u4e00-\u9fff]+")


def normal(path: str) -> str:
    """A path as written, lower-cased, with ``/``, without an edit's line prefix or the
    ``@`` that attaches a file to a request."""
    return re.sub(r"^\d+:", "", path.strip().replace("\\", "/")).lower().lstrip("@")


def key(path: str) -> str:
    """A path's key as ``repo_files.json`` keys it: ``parent/name``, or the bare name when
    that is all that was written."""
    return "/".join(PurePosixPath(normal(path)).parts[-2:])


def keys(path: str) -> set[str]:
    """Both keys a committed path answers to: ``parent/name`` and the bare name."""
    parts = PurePosixPath(normal(path)).parts
    return {parts[-1], "/".join(parts[-2:])} if parts else set()


def by_turn(session: dict) -> list[dict[str, str]]:
    """Per request of a session, the files its tools named and its request and replies
    mention (of the session's ``mentioned_paths``), each by its key, with the path as
    written. What a tool did before the first request is the first turn's."""
    mentioned = [normal(p) for p in session.get("mentioned_paths") or []]
    turns: list[dict[str, str]] = [{}]
    requests = 0
    for event in session["events"]:
        if event["hookType"] == "prompt_submit":
            requests += 1
            if requests > 1:
                turns.append({})
        files, data = turns[-1], event["data"]
        if event["hookType"] == "post_tool_use":
            path = (data.get("tool_input") or {}).get("file_path")
            if path:
                files.setdefault(key(path), normal(path))
        else:
            text = (data.get("prompt") or data.get("assistantResponse") or "").lower()
            for path in mentioned:
                if path.rsplit("/", 1)[-1] in text:
                    files.setdefault(key(path), path)
    return turns


def joined(turns: list[dict[str, str]]) -> dict[str, str]:
    """The files of several turns together, the first path written for each kept."""
    files: dict[str, str] = {}
    for turn in turns:
        for k, path in turn.items():
            files.setdefault(k, path)
    return files


def pairs(text: str) -> set[str]:
    """The Chinese character pairs of ``text``, as the analyzer indexes Chinese."""
    return {run[i : i + 2] for run in CJK.findall(text) for i in range(len(run) - 1)}


def words(text: str) -> set[str]:
    """English words of 4 letters or more and Chinese character pairs."""
    return set(WORD.findall(text.lower())) | pairs(text)


def specific(request: str, mine: list[set[str]], others: list[set[str]]) -> bool:
    """At least 5 words (8 Chinese characters) and a term of this project's."""
    if len(request.split()) < 5 and sum(map(len, CJK.findall(request))) < 8:
        return False
    if IDENTIFIER.search(request):
        return True
    for word in words(request):
        share = sum(word in used for used in mine) / max(1, len(mine))
        foreign = sum(word in used for used in others) / max(1, len(others))
        if TERM_SHARE[0] <= share <= TERM_SHARE[1] and (CJK.match(word) or foreign <= 0.5):
            return True
    return False


def title_words(title: str, common: set[str] = frozenset()) -> set[str]:
    """A title's words (stemmed, 3 letters or more) and Chinese character pairs, but generic
    ones and those in ``common``."""
    found = {stem(w) for w in TITLE_WORD.findall((title or "").lower())} | pairs(title or "")
    return found - GENERIC - common


class Project:
    """One project's sessions, read for labelling: what each touched, how widely."""

    def __init__(self, group: list[dict], history: list[dict], paths: list[str]) -> None:
        self.size = len(group)
        self.history = history
        self.committed = {k for path in paths for k in keys(path)}
        self.turns = {s["id"]: by_turn(s) for s in group}
        self.files = {sid: self.kept(joined(turns)) for sid, turns in self.turns.items()}
        self.spread = Counter(k for found in self.files.values() for k in found)
        titles = Counter(w for s in group for w in title_words(s.get("title")))
        self.common = {w for w, n in titles.items() if n > TITLE_SHARE * len(group)}

    def kept(self, files: dict[str, str]) -> dict[str, str]:
        """Of a session's files, those the repository committed and that are no rule,
        task list or config file (read by the whole path as written)."""
        return {
            k: path
            for k, path in files.items()
            if keys(path) & self.committed and not NEVER.search(path)
        }

    def links(self, key: str, named: set[str]) -> bool:
        """Whether a file can link two sessions: a source file few sessions touch, or a
        document very few touch or the request names."""
        suffix = PurePosixPath(key).suffix.lower()
        if suffix in SOURCE:
            return self.spread[key] <= SOURCE_SHARE * self.size
        return suffix in DOCUMENT and (self.spread[key] <= DOCUMENT_SESSIONS or key in named)

    def label(self, session: dict, request: str, work: dict[str, str]) -> dict | None:
        """The history sessions a request's work and title link it to, strongest first."""
        named = {key(name) for name in FILE_NAME.findall(request)}
        linking = {k for k in self.kept(work) if self.links(k, named)}
        said = title_words(session.get("title"), self.common)
        if not linking or not said:
            return None
        scored = {}
        for before in self.history:
            theirs = {k for k in self.files[before["id"]] if self.links(k, named)}
            shared = linking & theirs
            if not shared or not said & title_words(before.get("title"), self.common):
                continue
            idf = {k: math.log(self.size / self.spread[k]) for k in linking | theirs}
            norm = math.hypot(*(idf[k] for k in linking)) * math.hypot(*(idf[k] for k in theirs))
            cosine = sum(idf[k] ** 2 for k in shared) / norm if norm else 0.0
            scored[before["id"]] = (cosine + 1, sorted(shared))
        if not scored:
            return None
        best = sorted(scored, key=lambda s: -scored[s][0])[:RELEVANT]
        return {
            "relevant": best,
            "why": {s: scored[s][1] for s in best},
            "score": {s: round(scored[s][0], 3) for s in best},
        }


def on_its_own(request: str) -> bool:
    """A later request that stands on its own: not a follow-up, twice the least length, and
    naming an identifier or a file."""
    if FOLLOW_UP.match(request):
        return False
    long_enough = len(request.split()) >= 10 or sum(map(len, CJK.findall(request))) >= 16
    return long_enough and bool(IDENTIFIER.search(request))


def questions(projects: dict[str, list[dict]], repo: dict, share: float, until: float) -> list:
    """The `files` questions of every project (``real_sessions.by_project``)."""
    vocab = {p: [words(" ".join(s["prompts"])) for s in group] for p, group in projects.items()}
    out = []
    for name, group in projects.items():
        history, later = split(group, share)
        project = Project(group, history, repo.get(name, []))
        others = [v for p, used in vocab.items() if p != name for v in used]
        for session in later[: max(0, round(len(group) * until) - len(history))]:
            mine = [v for s, v in zip(group, vocab[name], strict=True) if s is not session]
            answered: list[frozenset[str]] = []
            for turn, request in enumerate(session["prompts"]):
                if len(answered) == LATER_REQUESTS:
                    break
                if not specific(request, mine, others) or (turn and not on_its_own(request)):
                    continue
                work = joined(project.turns[session["id"]][turn : turn + 2])
                found = project.label(session, request, work)
                if found is None or frozenset(found["relevant"]) in answered:
                    continue
                answered.append(frozenset(found["relevant"]))
                out.append(
                    {
                        "set": "files",
                        "project": name,
                        "language": session["language"],
                        "session": session["id"],
                        "turn": turn,
                        "title": session.get("title", ""),
                        "query": request,
                        **found,
                    }
                )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--data", type=Path, default=DATA)
    share_option(parser, 0.4)
    parser.add_argument(
        "--until",
        type=float,
        default=1.0,
        help="the share of each project's sessions up to which requests are asked (default 1)",
    )
    args = parser.parse_args()
    if not args.history_share < args.until <= 1:
        parser.error(f"--until {args.until}: give a share above --history-share, at most 1")
    need_data(parser, args.data, "sessions.jsonl", "queries.json", "repo_files.json")
    repo = json.loads((args.data / "repo_files.json").read_text(encoding="utf-8"))
    found = questions(by_project(args.data), repo, args.history_share, args.until)
    controls = [
        q
        for q in json.loads((args.data / "queries.json").read_text(encoding="utf-8"))
        if q["set"] == "control"
    ]
    path = written(args.out, args.data, [*found, *controls])
    counts = Counter(q["project"] for q in found)
    print(
        f"{len(found)} files questions ({dict(counts)}) and {len(controls)} controls in"
        f" {path}; ask them with --history-share {args.history_share}"
    )


if __name__ == "__main__":
    main()
