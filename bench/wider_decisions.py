"""More decision questions from the real coding sessions, by the rule their card states.

The coding-sessions set (``../shared/bench/coding-sessions/``) labels only 3 `decision`
questions, all in one project. This script applies the card's rule more widely, without an
LLM and without reading anything memvault derives: in each project's history sessions, a
user's request that states a choice in the imperative or the first person ("use …",
"can we use …", "let's switch to …", "改用 …") names a term that 2 to 25 % of the project's
sessions use; every later request (among a later session's first 6) that names the term is a
question, its relevant session the deciding one, once per later session and term.

Its terms are any words of the choice's tail of the right rarity, so some are words that
say little ("either", "things"): the questions are a wider, noisier probe, as the card's
rule would make them on other projects. It writes ``OUT/queries.json`` beside a link to
the set's ``sessions.jsonl``, for ``bench/real_sessions.py --data OUT`` (with
``--from-kept DIR``, a minute against kept homes).

    .venv/bin/python bench/wider_decisions.py OUT [--data DIR] [--history-share 0.6]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from real_sessions import DATA, HISTORY_SHARE, by_project, need_data, share_option, split, written

# A choice stated in the imperative or the first person, and the words after it.
CHOICE = re.compile(
    r"(?:^|[.!?]\s+|\n)\s*(?:please\s+|ok(?:ay)?,?\s+|also,?\s+|and\s+)?"
    r"(?:(?:let'?s|we should|we'll|we will|i want (?:you )?to|i'd like (?:you )?to|"
    r"can we(?: please)?|could we|you should|make sure (?:to|you))\s+)?"
    r"(use|switch to|replace|prefer|migrate to|don'?t use|do not use|stop using|always use|"
    r"never use|keep using)\b([^\n.!?]{0,160})",
    re.IGNORECASE,
)
CHOICE_ZH = re.compile(
    r"(?:请|請|我们|我們|统一|統一|不要|别|別)?(?:改用|使用|用|换成|換成|采用|採用|不要用|别用)"
    r"([^\n。！？]{0,80})"
)
# A term: backticked, dotted, camelCase, snake_case, with a digit, or a word of 4 letters or
# more.
TERM = re.compile(
    r"`([^`\s]{3,60})`|\b([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+|"
    r"[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[a-z0-9]+_[a-z0-9_]+|"
    r"[A-Za-z]+[0-9][A-Za-z0-9]*|[a-z][a-z0-9-]{3,})\b"
)
RARITY = (0.02, 0.25)  # the share of the project's sessions that use the term (the card's)
LATER_REQUESTS = 6  # of each later session, as the card's questions


def said(session: dict) -> str:
    """A session's requests and replies, lower-cased: where a term is used."""
    replies = (
        e["data"].get("assistantResponse", "")
        for e in session["events"]
        if e["hookType"] == "assistant_response"
    )
    return " ".join([*session["prompts"], *replies]).lower()


def decisions(project: str, history: list[dict], every: list[str]) -> list[tuple[str, str, str]]:
    """(session, term, sentence) for each choice a history request states."""

    def rarity(term: str) -> float:
        term = term.lower()
        return sum(term in text for text in every) / len(every)

    found = []
    for session in history:
        for prompt in session["prompts"]:
            for choice in [*CHOICE.finditer(prompt), *CHOICE_ZH.finditer(prompt)]:
                tail = choice.group(choice.lastindex or 0)
                for spelled in TERM.finditer(tail):
                    term = (spelled.group(1) or spelled.group(2)).strip().rstrip("()")
                    if len(term) < 3 or term.lower() == project.lower():
                        continue
                    if RARITY[0] <= rarity(term) <= RARITY[1]:
                        found.append((session["id"], term, choice.group(0).strip()[:200]))
    return found


def questions(projects: dict[str, list[dict]], share: float = HISTORY_SHARE) -> list[dict]:
    """The questions of every project's sessions (``real_sessions.by_project``), its first
    ``share`` the history."""
    out = []
    for project, mine in projects.items():
        history, later = split(mine, share)
        choices = decisions(project, history, [said(s) for s in mine])
        asked: set[tuple[str, str]] = set()
        for session in later:
            for turn, prompt in enumerate(session["prompts"][:LATER_REQUESTS]):
                for decided, term, sentence in choices:
                    if (session["id"], term) in asked:
                        continue
                    whole = rf"(?<![A-Za-z0-9_]){re.escape(term)}(?![A-Za-z0-9_])"
                    if re.search(whole, prompt, re.IGNORECASE):
                        asked.add((session["id"], term))
                        out.append(
                            {
                                "set": "decision",
                                "project": project,
                                "language": session["language"],
                                "session": session["id"],
                                "turn": turn,
                                "title": session.get("title", ""),
                                "query": prompt,
                                "relevant": [decided],
                                "decision": sentence,
                                "term": term,
                                "decision_from": "request",
                            }
                        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--data", type=Path, default=DATA)
    share_option(parser)
    args = parser.parse_args()
    need_data(parser, args.data, "sessions.jsonl")
    found = questions(by_project(args.data), args.history_share)
    path = written(args.out, args.data, found)
    counts = Counter(q["project"] for q in found)
    print(f"{len(found)} decision questions ({dict(counts)}) in {path}")


if __name__ == "__main__":
    main()
