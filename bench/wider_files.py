"""`files` questions from requests the coding-sessions set never asks, by its card's rule.

The set (``../shared/bench/coding-sessions/``) asks the later 40 % of each project's
sessions; every figure memvault was tuned by comes from those requests over the first 60 %.
This script moves the split: the first ``--history-share`` (0.4 unless told) is the history,
and the questions are the opening requests of the sessions up to ``--until`` (0.6), which the
set only ever ingests. Each is labelled as the card labels `files` questions, without an LLM
and without reading anything memvault derives:

- the request is specific: at least 5 words (Chinese: 8 characters) and a project-specific
  term (an identifier, a file name, a backticked name, or a word, or a Chinese character
  pair, that 1 to 35 % of the project's other sessions use and, for an English word, at
  most half of the other projects);
- the files its work touched (the tools' paths in its turn and the next) link it to a
  history session that touched them too, when they are source files that at most 20 % of
  the project's sessions touch, or documents that at most 3 touch or the request names;
  rule, task-list and config files never link, and a name counts only if the repository
  committed such a file;
- the two sessions' titles share a word that is not generic and is in at most 15 % of the
  project's titles; at most 5 relevant sessions, by an idf-weighted cosine of the two file
  sets (+1 for the titles).

The set's 60 controls are kept as they are (another project's request is irrelevant under
any split). It writes ``OUT/queries.json`` beside a link to the set's ``sessions.jsonl``;
ask them with the same split:

    .venv/bin/python bench/wider_files.py OUT [--data DIR] [--history-share 0.4] [--until 0.6]
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

from real_sessions import DATA, by_project, split

SOURCE = {
    ".py", ".cs", ".js", ".ts", ".tsx", ".jsx", ".vue", ".scss", ".css", ".html", ".ps1",
    ".psm1", ".go", ".rs", ".java", ".kt", ".rb", ".php", ".c", ".h", ".cpp", ".hpp",
    ".swift", ".sh", ".ipynb", ".sql",
}  # fmt: skip
DOCUMENT = {".md", ".txt", ".rst"}
NEVER = re.compile(
    r"(^|/)\.(cursor|github|vscode|claude)/|\.mdc$|(^|/)(todo|progress|tasks|agents|claude|plan"
    r"|cleanup|changelog|llms|readme)\.(md|txt)$|\.(json|toml|ya?ml|lock|ini|cfg|csproj|sln"
    r"|props|targets)$",
    re.IGNORECASE,
)
SOURCE_SHARE = 0.20  # a source file links if at most this share of the sessions touch it
DOCUMENT_SESSIONS = 3  # a document links if at most this many sessions touch it
TERM_SHARE = (0.01, 0.35)  # a project-specific word: this share of the other sessions use it
TITLE_SHARE = 0.15  # a title word in more of the project's titles agrees on nothing
RELEVANT = 5
LATER_REQUESTS = 6  # of each session, as the card's questions
FOLLOW_UP = re.compile(r"\s*(ok(ay)?\b|now\b|and\b|also\b|what about\b|then\b|继续|好的|那)", re.I)
GENERIC = set(
    re.findall(
        r"\w+",
        """fix fixing fixed error errors issue issues bug bugs implement implementing
        implementation add adding update updating project code file files create creating
        improve improving refactor refactoring test tests testing new use using help request
        task tasks change changes make making check review setup support feature features
        problem problems and for the with from into of in on to a an how what why""",
    )
)
IDENTIFIER = re.compile(
    r"`[^`\n]{2,60}`|\b[A-Za-z_][\w]*\.[A-Za-z]{1,5}\b|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z0-9]+[A-Z]\w*"
    r"|\b[a-z0-9]+_[a-z0-9_]+\b"
)
WORD = re.compile(r"[a-z][a-z0-9]{3,}")
CJK = re.compile(r"[\u4e00-\u9fff]+")


def keys(path: str) -> set[str]:
    """A path's lower-cased ``parent/name`` and bare name (``repo_files.json``'s keys)."""
    path = re.sub(r"^\d+:", "", path.strip().replace("\\", "/")).lower()
    parts = PurePosixPath(path).parts
    if not parts:
        return set()
    return {parts[-1], "/".join(parts[-2:])}


def touched(session: dict, turns: range | None = None) -> set[str]:
    """The keys of the files a session's tools named (in ``turns``, when given)."""
    out: set[str] = set()
    turn = -1
    for event in session["events"]:
        if event["hookType"] == "prompt_submit":
            turn += 1
        elif event["hookType"] == "post_tool_use" and (turns is None or turn in turns):
            given = event["data"].get("tool_input") or {}
            if given.get("file_path"):
                out |= keys(given["file_path"])
    return out


def words(text: str) -> set[str]:
    """English words of 4 letters or more and Chinese character pairs."""
    found = set(WORD.findall(text.lower()))
    for run in CJK.findall(text):
        found |= {run[i : i + 2] for i in range(len(run) - 1)}
    return found


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


def title_words(title: str, common: set[str]) -> set[str]:
    return {w for w in words(title or "") if w not in GENERIC and w not in common}


class Project:
    """One project's sessions, read for labelling: what each touched, how widely."""

    def __init__(self, group: list[dict], history: list[dict], paths: list[str]) -> None:
        self.size = len(group)
        self.history = history
        committed = {k for path in paths for k in keys(path)}
        self.committed = committed
        self.files = {s["id"]: touched(s) & committed for s in group}
        self.spread = Counter(k for found in self.files.values() for k in found)
        titles = Counter(w for s in group for w in words(s.get("title") or ""))
        self.common = {w for w, n in titles.items() if n > TITLE_SHARE * len(group)}

    def links(self, key: str, named: set[str]) -> bool:
        """Whether a touched file can link two sessions."""
        if NEVER.search(key):
            return False
        suffix = PurePosixPath(key).suffix.lower()
        if suffix in SOURCE:
            return self.spread[key] <= SOURCE_SHARE * self.size
        return suffix in DOCUMENT and (self.spread[key] <= DOCUMENT_SESSIONS or key in named)

    def label(self, session: dict, request: str, work: set[str]) -> dict | None:
        """The history sessions a request's work and title link it to, strongest first."""
        named = keys_named(request)
        linking = {k for k in work & self.committed if self.links(k, named)}
        said = title_words(session.get("title"), self.common)
        if not linking or not said:
            return None
        scored = {}
        for before in self.history:
            theirs = self.files[before["id"]]
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
            answered: list[list[str]] = []
            for turn, request in enumerate(session["prompts"][:LATER_REQUESTS]):
                if not specific(request, mine, others) or (turn and not on_its_own(request)):
                    continue
                found = project.label(session, request, touched(session, range(turn, turn + 2)))
                if found is None or found["relevant"] in answered:
                    continue
                answered.append(found["relevant"])
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


def keys_named(request: str) -> set[str]:
    """The keys of the file names a request writes."""
    return {
        k
        for name in re.findall(r"[\w./\\-]+\.[A-Za-z]{1,5}\b", request)
        for k in keys(name.lstrip("@"))
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--history-share", type=float, default=0.4)
    parser.add_argument("--until", type=float, default=0.6)
    args = parser.parse_args()
    if not 0 < args.history_share < args.until <= 1:
        parser.error("give 0 < --history-share < --until <= 1")
    source = args.data / "sessions.jsonl"
    if not source.is_file():
        sys.exit(f"no coding-sessions data at {args.data} (see bench/real_sessions.py)")
    repo = json.loads((args.data / "repo_files.json").read_text(encoding="utf-8"))
    found = questions(by_project(args.data), repo, args.history_share, args.until)
    controls = [
        q
        for q in json.loads((args.data / "queries.json").read_text(encoding="utf-8"))
        if q["set"] == "control"
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    link = args.out / "sessions.jsonl"
    if not link.exists():
        link.symlink_to(source.resolve())
    with (args.out / "queries.json").open("w", encoding="utf-8") as f:
        json.dump([*found, *controls], f, ensure_ascii=False, indent=1)
    counts = Counter(q["project"] for q in found)
    print(
        f"{len(found)} files questions ({dict(counts)}) and {len(controls)} controls in"
        f" {args.out / 'queries.json'}; ask them with --history-share {args.history_share}"
    )


if __name__ == "__main__":
    main()
