"""Focus: a prompt block tells of the earlier session a request is about.

Search returns each kind's best candidates, and above a memory-by-memory floor they still
came from many sessions: an event of one shares the request's file name, a reply of
another its error word (on the real coding sessions, 14 % of a prompt block's lines came
from a relevant session). A colleague reminding you names the session the work was done
in and what was said there. So the candidates are weighed per host session: a session is
a candidate when its hits *together* hold at least ``SESSION_FLOOR`` of the request's
weighed terms (``coverage``), or one of them is close in meaning; candidates are ranked by
how high their hits rank in every list (``evidence``, reciprocal ranks) times that share;
the best ``FOCUS_SESSIONS`` keep their lines, and of those only the lines that hold one of
the request's terms. A request's code names (``test_refresh_token_rotation``) are its
parts to the index, which a session about refresh tokens holds as well: a session whose
hits write them whole counts up to twice. Fragments are the project's distilled memory,
not one session's: the floor decides them, save what an agent said once in passing, which
is told only with its session (``memory.telling.prompt_hits``).

The constants were chosen by cross-validation across the real coding sessions,
``bench/coding.py`` and LoCoMo (``bench/floors.py``; the folds, the bootstrap intervals
and what each constant costs are in docs/benchmarks.md).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from memvault.search.context import covered
from memvault.search.engine import Hit

FOCUS_SESSIONS = 1
SESSION_FLOOR = 0.5  # words alone
# With vectors, a session whose hit is within ``COSINE`` of the request is a candidate
# however few of its words it holds; the word path is then held higher (cross-validated in
# each mode apart: ``bench/floors.py`` and ``bench/floors.py --hybrid``).
SESSION_FLOOR_WITH_VECTORS = 0.7
COSINE = 0.55
RRF_K = 5  # reciprocal-rank fusion's constant: rank 1 counts 1/6, rank 5 1/10
# A request that this many earlier sessions (the best placed one among them) hold about as
# fully as the best placed one, each at most ``RIVAL_GAP`` less of its weighed terms, names
# none of them: boilerplate ("For the code present, we get this error: …"), a question
# every session touches. No session's lines are told then; fragments pass their floor.
RIVALS = 3
RIVAL_GAP = 0.1
# A request to which this many earlier sessions each hold a hit close in meaning names none
# of them in meaning either (a build log is close to every build log pasted before): a
# session that is a candidate by a close hit alone is then not told.
CLOSE_RIVALS = 3
# A rival in meaning is a session with a close hit, or one whose closest hit is within
# ``CLOSE_GAP`` of the best placed session's while it holds the request's words about as
# fully (within ``RIVAL_GAP``): a hair over ``COSINE`` does not single out a session that
# others nearly match (0: close hits alone are rivals).
CLOSE_GAP = 0.1


def session_of(hit: Hit, links: Mapping[str, str]) -> str | None:
    """The host session a hit tells of: an observation's session, a session's own
    document, a board row's linked host session (``links``: board row → host session). A
    fragment belongs to no one session."""
    document = hit.document
    if document.kind == "session":
        return document.key
    if document.kind == "observation":
        return document.session_id
    if document.kind == "summary":
        return links.get(document.key, document.key)
    return None


def evidence(lists: Sequence[Sequence[Hit]], links: Mapping[str, str]) -> dict[str, float]:
    """Per host session, its hits' reciprocal ranks summed over every list (each kind is
    ranked among its own, so ranks, not scores, are what lists share)."""
    weighed: dict[str, float] = defaultdict(float)
    for hits in lists:
        for rank, hit in enumerate(hits, start=1):
            session = session_of(hit, links)
            if session is not None:
                weighed[session] += 1 / (RRF_K + rank)
    return dict(weighed)


def coverage(
    lists: Sequence[Sequence[Hit]],
    held: Callable[[Hit], Iterable[str]],
    weights: Mapping[str, float],
    links: Mapping[str, str],
) -> dict[str, float]:
    """Per host session, the weighed share of the request's terms its hits hold together
    (``held``: the terms the floor reads of one hit)."""
    terms = per_session(lists, held, links)
    return {session: covered(weights, words) for session, words in terms.items()}


def naming(
    lists: Sequence[Sequence[Hit]],
    named: Callable[[Hit], Iterable[str]],
    links: Mapping[str, str],
) -> dict[str, int]:
    """Per host session, how many of the request's code names its hits write whole
    (``named``: those one hit writes)."""
    return {session: len(names) for session, names in per_session(lists, named, links).items()}


def per_session(
    lists: Sequence[Sequence[Hit]],
    read: Callable[[Hit], Iterable[str]],
    links: Mapping[str, str],
) -> dict[str, set[str]]:
    """Per host session, what ``read`` reads of each of its hits, together."""
    found: dict[str, set[str]] = defaultdict(set)
    for hits in lists:
        for hit in hits:
            session = session_of(hit, links)
            if session is not None:
                found[session].update(read(hit))
    return found


def focused(
    lists: Sequence[list[Hit]],
    held: Callable[[Hit], Iterable[str]],
    weights: Mapping[str, float],
    links: Mapping[str, str],
    *,
    close: Callable[[Hit], bool] = lambda hit: False,
    named: Callable[[Hit], Iterable[str]] = lambda hit: (),
    names: Sequence[str] = (),
    most: int = FOCUS_SESSIONS,
    floor: float = SESSION_FLOOR,
    rivals: int = RIVALS,
    gap: float = RIVAL_GAP,
    close_rivals: int = CLOSE_RIVALS,
    close_gap: float = CLOSE_GAP,
) -> list[list[Hit]]:
    """Each list held to the ``most`` sessions the request is most about, and to their
    hits that hold one of its terms (or are ``close`` in meaning). A session is a candidate
    when its hits together hold at least ``floor`` of the request's weighed terms, or one
    of them is close; candidates are ranked by ``evidence`` times that share, times one
    and the share of the request's code names (``names``) its hits write whole
    (``named``: those one hit writes). When ``rivals`` sessions hold the request within
    ``gap`` of the best placed one's share, it singles none out and no session is kept
    (``ambiguous``), unless the best placed one alone writes the most of its code names.
    When the best placed one is a candidate only by a close hit and ``close_rivals``
    sessions have one (or a hit within ``close_gap`` of the best placed one's closest, and
    its words within ``gap`` of that one's share), meaning singles none out either: only
    the candidates by their words are left. Hits of no one session (fragments) are left as
    they are."""
    covers = coverage(lists, held, weights, links)
    eligible = {s for s, share in covers.items() if share >= floor}
    near = {s for hits in lists for h in hits if close(h) and (s := session_of(h, links))}
    eligible |= near
    weighed = evidence(lists, links)
    writes = naming(lists, named, links) if names else {}

    def weight(session: str) -> tuple[float, float, str]:
        # A session admitted by a close hit alone holds none of the words: its evidence
        # then orders it, and its id settles ties, so a block is the same in every process.
        # One that writes the request's code names whole counts up to twice.
        rank = weighed.get(session, 0.0)
        whole = 1 + min(writes.get(session, 0), len(names)) / len(names) if names else 1.0
        return (rank * covers.get(session, 0.0) * whole, rank, session)

    ranked = sorted(eligible, key=weight, reverse=True)
    # A session that is a candidate only by a hit close in meaning (its words below the
    # floor) is judged by its rivals in meaning: on the real sessions, build logs pasted as
    # requests were each close to three or four earlier build logs, and the one told was
    # never the relevant session. Rivals in words judge a session chosen by its words, one
    # close in meaning too: the near-identical prompts a host pastes are close to one
    # another as well.
    if (
        ranked
        and covers.get(ranked[0], 0.0) < floor
        and rivals_in_meaning(lists, ranked[0], near, links, close_gap, covers, gap) >= close_rivals
    ):
        ranked = [s for s in ranked if covers.get(s, 0.0) >= floor]
    by_words = bool(ranked) and covers.get(ranked[0], 0.0) >= floor
    # The one session that writes the most of the request's code names is singled out by
    # them, however many others hold its words alike.
    by_name = bool(ranked) and writes.get(ranked[0], 0) > max(
        (writes.get(s, 0) for s in covers if s != ranked[0]), default=0
    )
    alike = by_words and not by_name and ambiguous(ranked, covers, rivals, gap)
    kept = set() if alike else set(ranked[:most])

    def told(hit: Hit) -> bool:
        session = session_of(hit, links)
        if session is None:
            return True
        return session in kept and (close(hit) or any(term in weights for term in held(hit)))

    return [[h for h in hits if told(h)] for hits in lists]


def rivals_in_meaning(
    lists: Sequence[Sequence[Hit]],
    best: str,
    near: set[str],
    links: Mapping[str, str],
    gap: float,
    covers: Mapping[str, float],
    word_gap: float,
) -> int:
    """How many sessions rival ``best`` in meaning: those with a close hit (``near``), and
    those whose closest hit is within ``gap`` of ``best``'s closest while they hold the
    request's words about as fully (``covers``: each session's share, at most ``word_gap``
    less than ``best``'s)."""
    closest: dict[str, float] = {}
    for hits in lists:
        for hit in hits:
            session = session_of(hit, links)
            if session is not None and hit.semantic is not None:
                closest[session] = max(closest.get(session, -1.0), hit.semantic)
    if gap <= 0 or best not in closest:
        return len(near)
    least, words = closest[best] - gap, covers.get(best, 0.0) - word_gap
    alike = {s for s, cosine in closest.items() if cosine >= least and covers.get(s, 0.0) >= words}
    return len(near | alike)


def ambiguous(ranked: Sequence[str], covers: Mapping[str, float], rivals: int, gap: float) -> bool:
    """Whether at least ``rivals`` sessions (the best placed of ``ranked`` among them) each
    hold at least the best placed one's share of the request less ``gap`` (``covers``:
    every session's share, candidate or not): the request would be told of one of many
    sessions that say the same."""
    if not ranked:
        return False
    least = covers.get(ranked[0], 0.0) - gap
    return sum(share >= least for share in covers.values()) >= rivals
