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

from memvault.search.analyzer import tokens

# What a phrase or prefix must match: the document's own text, not its context.
OWN_TEXT = "{title body}"
_PART = re.compile(r'"([^"]*)"|(\S+)')
_PREFIX_WORD = re.compile(r"^[^\W_]+$")


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    terms: tuple[str, ...]  # analyzed words, in order, repeats removed
    phrases: tuple[tuple[str, ...], ...]
    prefixes: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not (self.terms or self.phrases or self.prefixes)

    def match(self) -> str:
        """The FTS5 expression: phrases and prefixes required, terms optional but counted."""
        required = [f"{OWN_TEXT} : {_phrase(p)}" for p in self.phrases] + [
            f"{OWN_TEXT} : {_quote(p)}*" for p in self.prefixes
        ]
        optional = [_quote(term) for term in self.terms]
        if required and optional:
            return f"({' AND '.join(required)}) AND ({' OR '.join([*required, *optional])})"
        return " AND ".join(required) if required else " OR ".join(optional)


def parse(text: str) -> Query:
    terms: list[str] = []
    phrases: list[tuple[str, ...]] = []
    prefixes: list[str] = []
    for quoted, word in _PART.findall(text):
        if quoted:
            words = tuple(tokens(quoted))
            if len(words) > 1:
                phrases.append(words)
            else:
                terms.extend(words)
        elif word.endswith("*") and _PREFIX_WORD.match(stem := _fold(word.rstrip("*"))):
            prefixes.append(stem)
        else:
            terms.extend(tokens(word))
    return Query(text, tuple(dict.fromkeys(terms)), tuple(phrases), tuple(prefixes))


def _fold(word: str) -> str:
    return unicodedata.normalize("NFKC", word).lower()


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def _phrase(words: tuple[str, ...]) -> str:
    return _quote(" ".join(words))
