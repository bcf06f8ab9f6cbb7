"""Lexical candidates: which of a request's words each part of the index is asked, the
asks made of the store, and their BM25 scores as shares of their part's best.

A part (``store.LEXICAL_PARTS``) is asked the request's own words and, apart, the other
language's words for them (weighed less), by that part's own counts: in a large index only
the rare words, at most ASKED_TERMS of a long request, or the newest documents when every
word is common. The kinds are asked either together, sharing one pool, or each kind for
its own pool in the same ask (a long request's words are in thousands of events, which
would crowd a kind of a few hundred documents out of a shared pool).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memvault.analyzer import tokens
from memvault.domain import Document
from memvault.search.counts import Counts
from memvault.search.query import Query
from memvault.search.ranking import NO_RARE_WORD, by_part, idf
from memvault.store import LEXICAL_PARTS, SESSION_PART, LexicalQuery, Store, part_of

SESSION_KINDS = frozenset({"session"})  # the kinds that are host sessions whole

COLUMN_WEIGHTS = (1.0, 1.0, 0.5, 0.5)  # title, body, context, dates
# In a large index, a query's common terms would make FTS5 read and score most of it. When
# some terms are rare (in at most RARE_DOCUMENTS documents, or RARE_SHARE of them), only
# those are searched: a common term adds little to BM25 and costs three times as much.
# When none is, the newest COMMON_WINDOW documents are searched. Small indexes are always
# searched whole, with every term. Measured: docs/benchmarks.md.
RARE_DOCUMENTS = 1000
RARE_SHARE = 0.01
COMMON_WINDOW = 5_000  # the newest documents a query of only common words searches
# A long request (a pasted log, a prompt of a page) is asked by the ASKED_TERMS of its rare
# terms that say most about it, by tf·idf, as Lucene's MoreLikeThis asks by a document's 25
# best: every further term adds documents to score for little change in the ranking. On the
# real coding sessions the longest Chinese request took 150 ms with its 300 pairs, 20 ms
# with 25, and recall of the relevant sessions held (docs/benchmarks.md).
ASKED_TERMS = 25
# The other language's words for a request's (search/lexicon.py) count this much of the
# request's own: a memory in the request's language that matches as well stays above.
ALTERNATIVE_WEIGHT = 0.5

# A request's code and file names (``Query.named``) are asked again of the sessions alone,
# in the column of what each touched: the files its tools read and edited, the commands it
# ran, what it searched for. A session's share of that ask's best is added, NAMED_WEIGHT
# times, to its share of the words' best: a request that pastes a failing test's trace
# (``AppDataBatchManagerTests.cs(171): … Assert.AreEqual failed``) shares its words with
# every session that pasted a trace, and its names with the few that worked on the code
# under test. Cross-validated with the other constants (docs/benchmarks.md).
NAMED_WEIGHT = 1.0
NAMED_FIELDS = ("context",)

Hits = list[tuple[int, float]]
# One ask of a part: the match, and the newest documents it searches (None: all of them).
Ask = tuple[LexicalQuery, int | None]


@dataclass(frozen=True, slots=True)
class Scope:
    """Which documents a search may return."""

    kinds: list[str]
    project: str | None
    include_archived: bool

    def holds(self, document: Document) -> bool:
        return (
            document.kind in self.kinds
            and (self.project is None or document.project == self.project)
            and (self.include_archived or not document.archived)
        )


def asked_terms(
    query: Query, terms: Sequence[str], counts: Mapping[str, int], total: int
) -> tuple[str, ...]:
    """The ``ASKED_TERMS`` of ``terms`` that weigh most in the request: how often it says
    each (tf) times its rarity in the index (idf), words before numbers (a pasted log's
    numbers are its timestamps, line numbers and durations: rare, and about nothing); a
    term no document holds is left out (it can match nothing). In the request's order."""

    def weight(term: str) -> tuple[bool, float]:
        return (not term.isdigit(), query.said.get(term, 0) * idf(counts[term], total))

    held = [term for term in terms if counts.get(term, 0)]
    best = set(sorted(held, key=weight, reverse=True)[:ASKED_TERMS])
    return tuple(term for term in terms if term in best)


class LexicalCandidates:
    def __init__(self, store: Store, counts: Counts):
        self.store = store
        self.counts = counts

    def together(self, query: Query, scope: Scope, *, pool: int) -> Hits:
        """BM25 candidates of all of ``scope``'s kinds, ``pool`` of each part of the
        index, as shares of their part's best (``ranking.by_part``): a session is scored
        among sessions, everything else among the rest, and the two scales differ."""
        found = {}
        for part in LEXICAL_PARTS:
            kinds = [kind for kind in scope.kinds if part_of(kind) == part]
            if not kinds:
                continue

            def ask(match: LexicalQuery, newest: int | None, kinds=kinds) -> Hits:
                return self.store.lexical_search(
                    match, kinds=kinds, limit=pool, **_filters(scope, newest)
                )

            own: Hits = []
            for match, newest in self._own_asks(query, part):  # the next where none matched
                own = ask(match, newest)
                if own:
                    break
            alternative = self._alternative_ask(query, part)
            found[part] = own if alternative is None else _added(own, ask(*alternative), pool)
        shares = by_part(found)
        if SESSION_PART not in found:
            return shares
        sessions = {doc_id for doc_id, _ in found[SESSION_PART]}
        named = self._named(query, scope, pool)
        sessions |= {doc_id for doc_id, _ in named}
        rest = [hit for hit in shares if hit[0] not in sessions]
        mine = _with_named([hit for hit in shares if hit[0] in sessions], named, pool)
        return sorted(rest + mine, key=lambda hit: hit[1], reverse=True)

    def per_kind(self, query: Query, scope: Scope, pools: Mapping[str, int]) -> dict[str, Hits]:
        """BM25 candidates of each kind of ``pools``, that many of it, as shares of that
        kind's best: what ``together`` finds for that kind alone, each part of the index
        asked once for all its kinds (and again only for those a first ask found none of)."""
        found: dict[str, Hits] = {}
        for part in LEXICAL_PARTS:
            mine = {kind: pool for kind, pool in pools.items() if part_of(kind) == part}
            if not mine:
                continue

            def ask(match: LexicalQuery, newest: int | None, limits: Mapping[str, int]):
                return self.store.lexical_search_per_kind(
                    match, limits=limits, **_filters(scope, newest)
                )

            own: dict[str, Hits] = {kind: [] for kind in mine}
            for match, newest in self._own_asks(query, part):  # the next where none matched
                unmatched = {kind: pool for kind, pool in mine.items() if not own[kind]}
                if not unmatched:
                    break
                own |= ask(match, newest, unmatched)
            alternative = self._alternative_ask(query, part)
            if alternative is None:
                found |= own
            else:
                other = ask(*alternative, mine)
                found |= {kind: _added(own[kind], other[kind], mine[kind]) for kind in mine}
        shares = {kind: by_part({part_of(kind): found[kind]}) for kind in pools}
        for kind in shares.keys() & SESSION_KINDS:
            named = self._named(query, scope, pools[kind])
            shares[kind] = _with_named(shares[kind], named, pools[kind])
        return shares

    def _named(self, query: Query, scope: Scope, pool: int) -> Hits:
        """The sessions that touched what the request names, by BM25 over those names in
        what each session touched, best first. A name held by half the sessions or more is
        not asked (``rare_cap``): it tells none apart, and BM25 gives it no weight."""
        named = query.named()
        if not named or NAMED_WEIGHT <= 0 or not SESSION_KINDS & set(scope.kinds):
            return []
        cap = self.rare_cap(SESSION_PART)
        spelled = {" ".join(phrase): phrase for phrase in named}
        counts = self.counts.terms(list(spelled), cap, SESSION_PART)
        named = tuple(phrase for text, phrase in spelled.items() if counts[text] <= cap)
        if not named:
            return []
        return self.store.lexical_search(
            LexicalQuery(alternatives=named, fields=NAMED_FIELDS),
            kinds=sorted(SESSION_KINDS & set(scope.kinds)),
            limit=pool,
            **_filters(scope, None),
        )

    def rare_cap(self, part: str | None = None) -> int:
        """How many documents (of ``part``, or of the whole index) a term may be in and
        still count as rare. Among sessions, a term held by half of them or more is not:
        BM25 gives it no weight there (its idf is floored), and reading where a whole
        session says it is the dearest read a search makes."""
        documents = self.counts.documents(part)
        cap = int(max(RARE_DOCUMENTS, RARE_SHARE * documents))
        return min(cap, (documents - 1) // 2) if part == SESSION_PART else cap

    def common_among_sessions(self, words: str) -> bool:
        """Whether more sessions hold each of ``words``' terms than count as rare among
        sessions (``rare_cap``: half of them, in a store of up to 2,000): words that tell no
        session apart say nothing of what a request is about."""
        terms = tokens(words)
        if not terms:  # only stop words ("other", "own"): nothing to tell sessions apart by
            return True
        if self.counts.documents(SESSION_PART) < 3:  # too few to call any word common
            return False
        cap = self.rare_cap(SESSION_PART)
        return min(self.counts.terms(terms, cap, SESSION_PART).values()) > cap

    def _own_asks(self, query: Query, part: str) -> list[Ask]:
        """The asks of the request's own words in one part, in order: each after the first
        is made only where the one before it matched nothing. Which words are asked is
        decided by that part's own counts, as its BM25 weighs them: a word in most events
        may be in few sessions."""
        if query.empty:
            return []
        if len(query.terms) < 2:
            return [(query.match(), None)]
        cap = self.rare_cap(part)
        counts = self.counts.terms(query.terms, cap, part)
        rare = tuple(term for term in query.terms if counts[term] <= cap)
        if len(rare) > ASKED_TERMS:
            rare = asked_terms(query, rare, counts, self.counts.documents(part))
        if len(rare) == len(query.terms):
            return [(query.match(), None)]
        rare = tuple(term for term in rare if counts[term])  # a word none holds finds none
        # Every term common: such a query cannot single much out, and scoring all that
        # matches it would cost a scan of the index. It searches the newest COMMON_WINDOW
        # documents, for all its terms together, else any of them. So does a query whose
        # rare words the project searched does not hold: a word rare in the index ("the
        # financial status of John") may be in none of its documents, and its common ones
        # still pick among them.
        common = [
            (query.match(anchor=query.terms, all_of=True), COMMON_WINDOW),
            (query.match(), COMMON_WINDOW),
        ]
        return [(query.keeping(set(rare)).match(), None), *common] if rare else common

    def _alternative_ask(self, query: Query, part: str) -> Ask | None:
        """The ask of the request's alternatives in one part, if it has any: as for the own
        words, in a large index only the rare alternatives are asked, or, when all are
        common, the newest COMMON_WINDOW documents."""
        if not query.alternatives:
            return None
        cap = self.rare_cap(part)
        if self.counts.documents(part) <= cap:
            return query.alternative_match(), None
        spelled = {" ".join(phrase): phrase for phrase in query.alternatives}
        counts = self.counts.terms(list(spelled), cap, part)
        rare = tuple(phrase for text, phrase in spelled.items() if counts[text] <= cap)
        if rare:
            return query.alternative_match(rare), None
        return query.alternative_match(), COMMON_WINDOW


def _added(own: Hits, alternative: Hits, pool: int) -> Hits:
    """The request's own words' hits and its alternatives' weighed by ALTERNATIVE_WEIGHT,
    added (BM25 is a sum over the words asked, so the two lists added are one BM25 in which
    an alternative counts less), the best ``pool``."""
    scores = dict(own)
    for doc_id, score in alternative:
        scores[doc_id] = scores.get(doc_id, 0.0) + ALTERNATIVE_WEIGHT * score
    return sorted(scores.items(), key=lambda item: item[1], reverse=True)[:pool]


def _with_named(sessions: Hits, named: Hits, pool: int) -> Hits:
    """Sessions' shares of the words' best with their shares of ``named``'s best added,
    NAMED_WEIGHT times, scaled back so that the best of them is what the best was (each
    part of the index stays its own scale: the other part's hits keep their places), the
    best ``pool``. A named ask whose best holds no rare name adds nothing."""
    if not named or named[0][1] < NO_RARE_WORD:
        return sessions
    scores = dict(sessions)
    # No session's words said anything (none matched, or only words most sessions hold, a
    # part ``by_part`` scaled by the others' best): the names are the sessions' own scale.
    best = max(scores.values(), default=0.0)
    best = best if best >= NO_RARE_WORD else 1.0
    for doc_id, score in named:
        scores[doc_id] = scores.get(doc_id, 0.0) + NAMED_WEIGHT * score / named[0][1]
    scale = best / max(scores.values())
    ranked = sorted(scores.items(), key=lambda item: item[1], reverse=True)[:pool]
    return [(doc_id, score * scale) for doc_id, score in ranked]


def _filters(scope: Scope, newest: int | None) -> dict:
    """What every ask of the index is filtered and weighed by, besides its kinds."""
    return {
        "project": scope.project,
        "include_archived": scope.include_archived,
        "weights": COLUMN_WEIGHTS,
        "newest": newest,
    }
