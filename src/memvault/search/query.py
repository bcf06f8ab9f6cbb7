"""A search query as the lexical index understands it.

Plain words match any of their terms (more matches rank higher); ``"quoted words"`` must
appear together in that order; ``word*`` matches every word starting with it. Those two
operators hold in a short query; a long text (a prompt, a pasted log) is plain words. Everything
goes through the same analyzer as the indexed text, so a query never asks for a term that
indexing could not have produced. The index is asked with a ``LexicalQuery``: plain values,
which each store engine spells in its own syntax.

A request's code and file names (``derive.names.request_names``) are kept apart as well:
the searcher asks them of what each session touched (``named``).

A request's words that the code-domain lexicon knows (``search/lexicon.py``) bring the other
language's words as *alternatives*: asked apart from the request's own words
(``alternative_match``) so the searcher can count them less.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from memvault.analyzer import CJK_CHAR, stem, tokens
from memvault.derive.names import request_names
from memvault.search.lexicon import MAX_ALTERNATIVES, Concept, alternatives_of, lexicon
from memvault.store import LexicalQuery

_PART = re.compile(r'"([^"]*)"|(\S+)')
_PREFIX_WORD = re.compile(r"^[^\W_]+$")
_PIECE = re.compile(r"[^\W_]+")
# Quotes and stars are operators in a query of at most this many words (what a person types
# into a search box); a longer text is read as plain words.
OPERATOR_WORDS = 12
NAME_TERMS = 8  # the most words of one name asked together


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    terms: tuple[str, ...]  # analyzed words, in order, repeats removed
    phrases: tuple[tuple[str, ...], ...]
    prefixes: tuple[tuple[str, ...], ...]  # each: the ways its start may be indexed
    # The other language's words for the request's (each an analyzed phrase).
    alternatives: tuple[tuple[str, ...], ...] = ()
    # How often the text says each of its plain words, counted when it was parsed (a long
    # text is tokenized once, however many parts and kinds its words are chosen for).
    said: Mapping[str, int] = field(default_factory=dict, compare=False, hash=False)
    # What the request names in the lexicon, each with every way a memory may say it: the
    # relevance floor counts a memory that says it in the other language as holding it.
    concepts: tuple[Concept, ...] = field(default=(), compare=False, hash=False)
    # The code and file names it writes, as written (``derive.names.request_names``).
    names: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.terms or self.phrases or self.prefixes)

    def keeping(self, terms: set[str]) -> Query:
        """The same query with only these of its plain terms."""
        return replace(self, terms=tuple(t for t in self.terms if t in terms))

    def match(self, *, anchor: tuple[str, ...] = (), all_of: bool = False) -> LexicalQuery:
        """What the index is asked: phrases and prefixes required (in a document's own text,
        not its context), terms optional but counted.

        ``anchor`` names terms at least one of which (all of which, with ``all_of``) a
        result must hold: a large index is then only scored where its rarer terms are."""
        return LexicalQuery(
            terms=self.terms,
            phrases=self.phrases,
            prefixes=self.prefixes,
            anchor=anchor,
            all_of=all_of,
        )

    def named(self) -> tuple[tuple[str, ...], ...]:
        """Its names as the index holds them: a name of words (``google_scraper``) as the
        phrase of its words; a compound (``GoogleScraper``) as its whole term and as the
        phrase of its parts, which the index writes after it (``googlescrap googl
        scraper``), so that either spelling finds the other; a name of several pieces, one
        of them a compound (``GetAll_ReturnsAll``), as each piece's whole term (the parts
        written after each compound part it from the next)."""
        out: list[tuple[str, ...]] = []
        for name in self.names:
            pieces = [found for piece in _PIECE.findall(name) if (found := tokens(piece))]
            if len(pieces) == 1:
                (found,) = pieces
                out.append(found[:1])
                if len(found) > 2:  # a phrase of one part would be a plain word
                    out.append(tuple(found[1 : NAME_TERMS + 1]))
            elif any(len(found) > 1 for found in pieces):
                # A short plain piece alone (the ``Get`` of ``TestStore_Get``) names nothing.
                out += [found[:1] for found in pieces if len(found) > 1 or len(found[0]) > 3]
            elif pieces:
                out.append(tuple(found[0] for found in pieces[:NAME_TERMS]))
        return tuple(dict.fromkeys(tuple(phrase) for phrase in out))

    def translated(self, translation: str | None) -> Query:
        """The same query with the words of its translation (by the LLM) among its
        alternatives, before the lexicon's: those it does not hold already."""
        if not translation:
            return self
        held = set(self.terms)
        words = [(term,) for term in dict.fromkeys(tokens(translation)) if term not in held]
        alternatives = tuple(dict.fromkeys([*words, *self.alternatives]))[:MAX_ALTERNATIVES]
        return replace(self, alternatives=alternatives)

    def alternative_match(
        self, alternatives: tuple[tuple[str, ...], ...] | None = None
    ) -> LexicalQuery:
        """What the index is asked for the alternatives (these of them, when given): the
        same phrases and prefixes required, the alternatives optional but counted."""
        return LexicalQuery(
            phrases=self.phrases,
            prefixes=self.prefixes,
            alternatives=self.alternatives if alternatives is None else alternatives,
        )


def parse(text: str, *, project: str | None = None) -> Query:
    """``text`` as the index is asked it; ``project``: where it is asked (none of its names
    that are the project's own is asked of what sessions touched)."""
    terms: list[str] = []
    phrases: list[tuple[str, ...]] = []
    prefixes: list[tuple[str, ...]] = []
    parts = _PART.findall(text)
    if len(parts) > OPERATOR_WORDS:
        # A prompt or a pasted log, not a search expression: its quotes and stars are its
        # own (a C# "void*", a quoted error), and none of its words is required.
        said = Counter(tokens(text))
        terms = tuple(said)
        named = tuple(lexicon().concepts(text, terms))
        alternatives = alternatives_of(named, terms)
        return Query(
            text, terms, (), (), alternatives, said, named, request_names(text, besides=project)
        )
    for quoted, word in parts:
        if quoted:
            words = tuple(tokens(quoted))
            if len(words) > 1:
                phrases.append(words)
            else:
                terms.extend(words)
        elif word.endswith("*") and _PREFIX_WORD.match(start := _fold(word.rstrip("*"))):
            if CJK_CHAR.search(start):
                # Indexed as character pairs: a CJK prefix is the phrase of its pairs.
                pairs = tuple(tokens(start))
                if len(pairs) > 1:
                    phrases.append(pairs)
                else:
                    prefixes.append(pairs)
            else:
                # The index holds stems: "connection*" must find "connect…" too.
                prefixes.append(tuple(dict.fromkeys([start, stem(start)])))
        else:
            terms.extend(tokens(word))
    said = Counter(terms)
    own = tuple(said)
    named = tuple(lexicon().concepts(text, own))
    return Query(
        text,
        own,
        tuple(phrases),
        tuple(prefixes),
        alternatives_of(named, own),
        said,
        named,
        request_names(text, besides=project),
    )


def _fold(word: str) -> str:
    return unicodedata.normalize("NFKC", word).lower()
