"""Context packing: the most useful memory for a task, within a token budget.

The block opens with the report line agents show their user (``📖 agent memory: read N
fragments → …``, in the language setting's words), then fragments (summary and facts),
session summaries and observations, best first, each section only as long as the budget
allows.
Tokens are estimated, not counted with a model's tokenizer: about four characters per
token for alphabetic text and one per CJK character, which errs on the generous side.

A memory found for a request is *relevant* only when it passes the relevance floor
(``relevant``): search always returns its best candidates, however weak, and an agent told
that a fragment about auth is "relevant" to a Helm upgrade learns the wrong thing.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from memvault import analyzer
from memvault.analyzer import CJK_CHAR, estimate_tokens, tokens
from memvault.derive.text import same
from memvault.domain import Document
from memvault.language import Strings, strings
from memvault.search.engine import Hit
from memvault.search.lexicon import Concept
from memvault.search.ranking import idf
from memvault.vault.remember import facts_from
from memvault.vault.snapshot import item_key

FACTS_PER_FRAGMENT = 8
SESSION_FILES = 4  # files named on a session's line
_NAME_PREFIX = re.compile(r"^.+? - \d{4}-\d{2}-\d{2} - ")
# Observations of these hooks are rendered by their title ("Bash: npm test"): their
# narrative is the tool's raw input and output, JSON an agent should not be handed.
TOOL_HOOKS = frozenset({"pre_tool_use", "post_tool_use", "post_tool_failure"})

# The relevance floor. ``matched`` is the share of the request's words a memory holds, each
# word weighed by how rare it is in the index (IDF), so common words ("fix", "update") count
# little and words memory has never seen ("kubernetes", "helm") count fully against it. On
# bench/data/relevance.tsv (bench/relevance.py: a project's fragments, 16 requests about it
# in English and Chinese, 16 unrelated) unrelated requests scored at most 0.21 and requests
# about the project at least 0.35 on their target. Within that gap, cross-validation across
# the real coding sessions, bench/coding.py and LoCoMo (bench/floors.py) chose 0.24 in every
# fold (0.28, the gap's midpoint, was the floor before: one real question fewer).
MATCHED_FLOOR = 0.24
IDF_DOCUMENTS = 100
# With vectors, a memory at least this close in meaning is relevant however few words it
# shares (a paraphrase). With the packaged multilingual-e5-small (centred), unrelated
# requests reached cosines up to 0.36 and the targets of requests about the project had a
# median of 0.62: the floor stays clear of the unrelated ones. Another model's cosines
# have another scale; this floor is the packaged model's.
SEMANTIC_FLOOR = 0.45
# Of a memory's body, what the floor reads: as much as an observation's narrative held when
# the floor was measured (400 characters, with its title and facts). Search reads an
# event's whole text now, and a long reply or tool output holds some word of almost any
# request: judged whole, 3 in 8 requests from another project got a block (0.63 silent on
# the real coding sessions, against 0.88 judged this way).
FLOOR_CHARS = 600
# A prompt block's activity lines that say near the same (cosine of their words' counts,
# ``analyzer.distinct``) are told once. Two of one analyzer warning pasted again with another
# figure are at 0.90. Measured on the real coding sessions, bench/coding.py and LoCoMo
# (bench/floors.py --same-lines; docs/benchmarks.md): it takes away only lines a block
# already holds, and gains on the real sessions alone (the other two hold few repeats).
SAME_LINE = 0.85


@dataclass(slots=True)
class Packed:
    text: str
    tokens: int
    budget: int
    blocks: list[dict[str, str]] = field(default_factory=list)
    truncated: bool = False

    def items(self) -> list[dict[str, str]]:
        """The memories the block holds (not its report line, headings or hint)."""
        return [b for b in self.blocks if b["kind"] in MEMORY_KINDS]


MEMORY_KINDS = frozenset({"fragment", "project", "summary", "session", "observation"})


def term_weights(
    terms: Iterable[str],
    counts: Mapping[str, int],
    total: int,
    concepts: Sequence[Concept] = (),
) -> dict[str, float]:
    """Each of a request's terms weighed by its rarity in the index (BM25's IDF): a term no
    document holds weighs the most. A small index is weighed as one of ``IDF_DOCUMENTS``:
    in a handful of documents (the request's own prompt among them) every word is "common"
    and IDF says nothing.

    Chinese is indexed as overlapping character pairs, and a request's pairs that span two
    words ("试失" of "测试失败") are in no memory: a pair no document holds is left out,
    where it would count against every memory as a word nobody ever wrote. (Once the
    request's own prompt is indexed, its pairs are held once and weighed as before.)
    Measured with ``bench/floors.py``: ``bench/coding.py``'s prompt blocks drew on 0.63 of
    the answering sessions with such pairs weighed, 0.84 without.

    A term that says a lexicon word (``concepts``; ``counts`` holds their words' counts
    too) which no document holds as the request says it, but memory holds in another way,
    is a word memory wrote: weighed by how many documents hold the most held of those ways.
    So a pair stays (重试 of sessions written in English, which say "retry"), and an
    English word of sessions written in Chinese weighs as their Chinese word does, not as
    a word nobody wrote."""
    total = max(total, IDF_DOCUMENTS)
    elsewhere: dict[str, int] = {}
    for concept in concepts:
        held = max((_held_by(words, counts) for words in concept.others), default=0)
        for term in concept.said if held else ():
            elsewhere[term] = max(elsewhere.get(term, 0), held)
    return {
        term: idf(counts.get(term, 0) or elsewhere.get(term, 0), total)
        for term in dict.fromkeys(terms)
        if not (CJK_CHAR.match(term) and not counts.get(term, 0) and term not in elsewhere)
    }


def _held_by(words: Sequence[str], counts: Mapping[str, int]) -> int:
    """About how many documents hold every one of ``words``: those that hold the rarest."""
    return min((counts.get(word, 0) for word in words), default=0)


def concept_words(concepts: Sequence[Concept]) -> list[str]:
    """The terms of every other way ``concepts`` may be said, to be counted."""
    return list(dict.fromkeys(t for c in concepts for words in c.others for t in words))


def holding(own: Iterable[str], concepts: Sequence[Concept]) -> frozenset[str]:
    """A memory's terms (``own``), and the request's own terms for each lexicon word it
    says in another way: a session written in English that says "retry" holds the 重试
    of a request in Chinese."""
    held = set(own)
    for concept in concepts:
        if not held.issuperset(concept.said) and any(
            held.issuperset(words) for words in concept.others
        ):
            held.update(concept.said)
    return frozenset(held)


def uncounted(
    terms: Iterable[str], counts: Mapping[str, int], total: int, held: Sequence[frozenset[str]]
) -> tuple[dict[str, int], int]:
    """``counts`` of ``total`` documents as if the documents whose terms are ``held`` were
    not among them: each term less the documents that hold it."""
    if not held:
        return dict(counts), total
    wanted = set(terms)
    holding = Counter(term for own in held for term in wanted.intersection(own))
    return {t: max(c - holding[t], 0) for t, c in counts.items()}, max(total - len(held), 0)


def matched(weights: Mapping[str, float], document: Document) -> float:
    """The weighed share of the request's terms ``document``'s own text holds, 0–1: its
    title, summary and the start of its body (``FLOOR_CHARS``)."""
    return covered(weights, own_terms(document))


def own_terms(document: Document) -> set[str]:
    """The terms the floor reads of a memory: its title, summary and the start of its
    body (``FLOOR_CHARS``). An event's summary is the line it is told by, made of its whole
    text (``derive.text.plain_line``): its body's start is what the floor was measured on."""
    said = "" if document.kind == "observation" else document.summary
    return set(tokens(f"{document.title}\n{said}\n{document.body[:FLOOR_CHARS]}"))


def covered(weights: Mapping[str, float], held: Iterable[str] | set[str]) -> float:
    """The weighed share of the request's terms that ``held`` holds, 0–1."""
    whole = sum(weights.values())
    if whole <= 0:
        return 0.0
    held = held if isinstance(held, set | frozenset) else set(held)
    return sum(weight for term, weight in weights.items() if term in held) / whole


def relevant(hit: Hit, share: float) -> bool:
    """Whether a hit passes the relevance floor: enough of the request's words, or (with
    vectors) close enough in meaning."""
    if share >= MATCHED_FLOOR:
        return True
    return hit.semantic is not None and hit.semantic >= SEMANTIC_FLOOR


def report_line(
    fragments: list[Hit],
    *,
    words: Strings | None = None,
    label: str = "relevant",
    standing: Collection[str] = (),
    searched: bool = False,
    repeated: bool = False,
) -> str:
    """The line an agent shows its user: the fragments read, each with its label
    (``relevant`` for a request, ``standing`` for a project's standing block and for the
    fragments whose keys are in ``standing``), or that no fragment was relevant
    (``searched``), that what was found the session has (``repeated``), or that there is
    nothing yet."""
    words = words or strings()
    if not fragments:
        if repeated:
            return words.report.format(n=0, listed=words.nothing_new)
        return words.report.format(
            n=0, listed=words.nothing_relevant if searched else words.nothing_yet
        )
    tag = words.relevant if label == "relevant" else words.standing

    def tagged(hit: Hit) -> str:
        return words.standing if hit.document.key in standing else tag

    listed = "; ".join(
        f"{_short_title(hit.document.title)}: {_clip(hit.document.summary, 60)} → {tagged(hit)}"
        for hit in fragments
    )
    return words.report.format(n=len(fragments), listed=listed)


def pack(
    fragments: list[Hit],
    summaries: list[Hit],
    observations: list[Hit],
    *,
    budget: int,
    project_summary: str | None = None,
    project: str | None = None,
    words: Strings | None = None,
    label: str = "relevant",
    standing: Collection[str] = (),
    searched: bool = False,
    repeated: bool = False,
    terms: Iterable[str] = (),
) -> Packed:
    """Fill ``budget`` tokens: the report line, then fragments, the project's L2 summary,
    session summaries and observations, in that order, each item whole or not at all.
    ``terms``: the request's, which pick the decision a session's line quotes."""
    words = words or strings()
    out = Packed(text="", tokens=0, budget=budget)
    lines: list[str] = []

    def add(block: str, kind: str, item_id: str) -> bool:
        cost = estimate_tokens(block) + 1
        if out.tokens + cost > budget:
            out.truncated = True
            return False
        lines.append(block)
        out.tokens += cost
        out.blocks.append({"kind": kind, "id": item_id, "text": block})
        return True

    def line_of(kept: list[Hit]) -> str:
        return report_line(
            kept,
            words=words,
            label=label,
            standing=standing,
            searched=searched,
            repeated=repeated,
        )

    # As many fragments as fit together with the report line that lists them.
    kept: list[Hit] = []
    spent = 0
    heading = estimate_tokens(words.heading_fragments) + 1
    for hit in fragments:
        spent += estimate_tokens(_fragment_block(hit)) + 1
        line = estimate_tokens(line_of([*kept, hit])) + 1
        if spent + heading + line > budget:
            out.truncated = True
            break
        kept.append(hit)
    add(line_of(kept), "report", "report")
    if kept:
        add(words.heading_fragments, "heading", "fragments")
        for hit in kept:
            add(_fragment_block(hit), "fragment", hit.document.key)
    said = [hit.document.summary for hit in kept]
    if project_summary:
        add(
            f"{words.heading_project}\n{project_summary.strip()}",
            "project",
            f"project:{project or ''}",
        )
    _section(
        add,
        words.heading_sessions,
        "summaries",
        [(told(h.document, terms, said), h.document.kind, h.document.key) for h in summaries],
    )
    _section(
        add,
        words.heading_activity,
        "observations",
        [
            (
                f"- [{h.document.updated_at[:10]}] {activity(h.document)}",
                "observation",
                h.document.key,
            )
            for h in observations
        ],
    )
    if kept or project_summary:
        add(words.sources_hint, "hint", "sources")
    out.text = "\n".join(lines)
    return out


def told(document: Document, terms: Iterable[str] = (), said: Sequence[str] = ()) -> str:
    """A session as one line: its board row's topic and summary, or, for a session with no
    row, what it was asked and the files it touched, and under it the decision it made
    that shares the most of the request's ``terms`` (when one shares any), unless a
    fragment above says it (``said``: their summaries; ``derive.text.same``)."""
    if document.kind != "session":
        # A topic the summary opens with ("Method has 8 parameters, which is…") is said once.
        topic = document.title.rstrip("…. ").casefold()
        if topic and document.summary.casefold().startswith(topic):
            return f"- {document.summary}"
        return f"- {document.title}: {document.summary}".rstrip(": ")
    files = ", ".join(document.meta.get("files", [])[:SESSION_FILES])
    line = f"- [{document.updated_at[:10]}] {_clip(document.summary, 160)}"
    line = f"{line} (files: {files})" if files else line
    decision = decision_about(document, terms)
    if decision and not any(same(decision, summary) for summary in said):
        return f"{line}\n  - decided: {decision}"
    return line


def decision_about(document: Document, terms: Iterable[str]) -> str | None:
    """Of a session's decisions, the one holding the most of ``terms``; None when none
    holds any."""
    wanted = set(terms)
    best, shared = None, 0
    for decision in document.meta.get("decisions") or []:
        count = len(wanted.intersection(tokens(decision)))
        if count > shared:
            best, shared = decision, count
    return best


def activity(document: Document) -> str:
    """An observation as one line: a tool call by its title, never its raw input and
    output; anything else by its narrative."""
    if document.meta.get("hookType") in TOOL_HOOKS:
        return document.title
    return document.summary or document.title


def distinct(observations: Sequence[Hit], same: float = SAME_LINE) -> list[Hit]:
    """``observations`` without those whose line (``activity``) says near the same as one
    above it (cosine of their words' counts at least ``same``): a session that pasted one
    analyzer warning seven times is told it once."""
    return list(analyzer.distinct(observations, lambda hit: activity(hit.document), same))


def _section(add, heading: str, name: str, items: list[tuple[str, str, str]]) -> None:
    """A heading and as many items as fit; no heading when not even the first one does."""
    if not items:
        return
    first = items[0][0]
    if not add(f"{heading}\n{first}", items[0][1], items[0][2]):
        return
    for text, kind, key in items[1:]:
        if not add(text, kind, key):
            return


def _short_title(title: str) -> str:
    """A fragment's description: its file name without the project and date."""
    return _NAME_PREFIX.sub("", title)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _fragment_block(hit: Hit) -> str:
    """A fragment: its title, importance and summary, then its facts. A fact that says the
    summary again (a fragment of one decision says it in both) is not repeated: its label
    (``decision``) goes on the head line."""
    document = hit.document
    facts = facts_from(document.body)[:FACTS_PER_FRAGMENT]
    kind = ""
    for index, fact in enumerate(facts):
        label, labelled, said = fact.partition(": ")
        if _restates(said if labelled else fact, document.summary):
            del facts[index]
            kind = f"{label}, " if labelled and _LABEL.fullmatch(label) else ""
            break
    head = f"- **{document.title}** ({kind}importance {document.importance:g}): "
    head += document.summary
    return "\n".join([head, *(f"  - {fact}" for fact in facts)])


_LABEL = re.compile(r"[a-z][a-z ]{0,20}")  # a fact's label: "decision", "next step"


def _restates(fact: str, summary: str) -> bool:
    """Whether ``fact`` is the same item as ``summary`` (``snapshot.item_key``: case,
    spacing and end dots aside), or what a summary clipped with "…" begins to say."""
    said, summed = item_key(fact), item_key(summary)
    if summed.endswith("…"):
        return said.startswith(summed[:-1].rstrip())
    return said == summed
