"""How much of a text gets a vector: the start of it, about one window of the model.

A model reads a window of tokens at a time (multilingual-e5-small: 512). The packaged
engine does not truncate: a longer text is cut into windows whose vectors are averaged, so
its cost grows with its length (2.9 s for 8,000 characters) and its vector blurs what each
part says. A document's vector and a query's read its head instead; the lexical index
still reads the whole text (docs/benchmarks.md, "What a vector reads").

``head`` cuts without a tokenizer, so it errs long: it keeps at least what fits in the
budget, and a provider that counts tokens (e5) cuts the rest exactly.
"""

from __future__ import annotations

from memvault.analyzer import CJK_CHAR

# Tokens of a document's vector text (its prefix and the model's two markers included; the
# window holds 512). On the real sessions a session document's first 256 tokens ranked its
# session better than its first 512 or its whole text, at 2.4 times the documents/s of 512
# (docs/benchmarks.md, "What a vector reads").
VECTOR_TOKENS = 256
# Tokens of a query's vector text: every new request costs its query's embedding, so a
# pasted log must not cost a second. 64 took 88 ms here where 128 took 191 (search's p95
# is to stay under 150 ms) and ranked as well at 10 as 128, 256 or the whole request (one
# question in 28 fewer at 5; measured in the same place).
QUERY_TOKENS = 64
# A cut made without the tokenizer errs long, so it never drops what the model would read.
# Alphabetic text of real sessions reads as 2–5 characters a token (code and paths fewer,
# prose more): the cut takes 6. Chinese reads as 0.55–0.78 tokens a character: it takes 2
# characters a token.
GENEROUS_CHARS_PER_TOKEN = 6
CJK_CHARS_PER_TOKEN = 2
_CJK_WEIGHT = GENEROUS_CHARS_PER_TOKEN // CJK_CHARS_PER_TOKEN  # in sixths of a token


def head(text: str, tokens: int = VECTOR_TOKENS) -> str:
    """The start of ``text`` holding at least its first ``tokens`` tokens (estimated); the
    text itself when it is short enough."""
    if tokens < 1:
        raise ValueError(f"a vector text needs at least one token, not {tokens}")
    if len(text) <= tokens * CJK_CHARS_PER_TOKEN:  # a character counts half a token at most
        return text
    budget = tokens * GENEROUS_CHARS_PER_TOKEN  # in sixths of a token
    spent = 0
    for end, char in enumerate(text):
        spent += _CJK_WEIGHT if CJK_CHAR.match(char) else 1
        if spent > budget:
            return text[:end]
    return text
