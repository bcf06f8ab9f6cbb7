"""A search query as the lexical index understands it.

Plain words match any of their terms (more matches rank higher); ``"quoted words"`` must
appear together in that order; ``word*`` matches every word starting with it. Everything
goes through the same analyzer as the indexed text, so a query never asks for a term that
indexing could not have produced.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from memvault.search.analyzer import CJK_CHAR, stem, tokens

# What a phrase or prefix must match: the document's own text, not its context.
OWN_TEXT = "{title body}"
# Where optional terms may match: everything but the filter tokens.
SEARCHED = "{title body context dates}"
# Matches every document, through the filter tokens of the scope column (which never
# score: see store/migrations/sqlite/0004_documents.sql).
ANY_DOCUMENT = "scope : (kfragment OR ksummary OR kobservation)"
_PART = re.compile(r'"([^"]*)"|(\S+)')
_PREFIX_WORD = re.compile(r"^[^\W_]+$")


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    terms: tuple[str, ...]  # analyzed words, in order, repeats removed
    phrases: tuple[tuple[str, ...], ...]
    prefixes: tuple[tuple[str, ...], ...]  # each: the ways its start may be indexed

    @property
    def empty(self) -> bool:
        return not (self.terms or self.phrases or self.prefixes)

    def keeping(self, terms: set[str]) -> Query:
        """The same query with only these of its plain terms."""
        return Query(
            self.text, tuple(t for t in self.terms if t in terms), self.phrases, self.prefixes
        )

    def match(self, *, anchor: tuple[str, ...] = (), all_of: bool = False) -> str:
        """The FTS5 expression: phrases and prefixes required, terms optional but counted.

        ``anchor`` names terms at least one of which (all of which, with ``all_of``) a
        result must hold: a large index is then only scored where its rarer terms are."""
        required = [f"{OWN_TEXT} : {_phrase(p)}" for p in self.phrases] + [
            "(" + " OR ".join(f"{OWN_TEXT} : {_quote(start)}*" for start in p) + ")"
            for p in self.prefixes
        ]
        if anchor:
            joiner = " AND " if all_of else " OR "
            required.append(f"({joiner.join(f'{SEARCHED} : {_quote(t)}' for t in anchor)})")
        optional = [f"{SEARCHED} : {_quote(term)}" for term in self.terms if term not in anchor]
        if not required:
            return " OR ".join(optional)
        if not optional:
            return " AND ".join(required)
        # Every term appears once (BM25 would count a repeated one twice); ANY_DOCUMENT
        # keeps the optional group from requiring any of its terms.
        return f"{' AND '.join(required)} AND ({' OR '.join([*optional, ANY_DOCUMENT])})"


def parse(text: str) -> Query:
    terms: list[str] = []
    phrases: list[tuple[str, ...]] = []
    prefixes: list[tuple[str, ...]] = []
    for quoted, word in _PART.findall(text):
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
    return Query(text, tuple(dict.fromkeys(terms)), tuple(phrases), tuple(prefixes))


def _fold(word: str) -> str:
    return unicodedata.normalize("NFKC", word).lower()


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def _phrase(words: tuple[str, ...]) -> str:
    return _quote(" ".join(words))
