"""Focus, as a function: which earlier session a prompt block tells of (search/focus.py)."""

from __future__ import annotations

from memvault.domain import Document
from memvault.search.engine import Hit
from memvault.search.focus import focused

WEIGHTS = {"pool": 1.0, "leak": 1.0, "connect": 1.0, "load": 1.0}


def hit(n: int, session: str, text: str, semantic: float | None = None) -> Hit:
    document = Document(
        id=n,
        kind="observation",
        key=f"obs_{n}",
        project="shop",
        session_id=session,
        title="",
        summary=text,
        body="",
        importance=0.5,
        updated_at="2026-11-20T10:00:00.000Z",
        path=None,
        event_ids=[f"{session}:{n}"],
        archived=False,
        meta={},
        access_count=0,
        last_accessed=None,
    )
    return Hit(document, 1.0, 1.0, 0.5, 1.0, semantic=semantic)


def held(h: Hit) -> set[str]:
    return set(h.document.summary.split())


def close(h: Hit) -> bool:
    return h.semantic is not None and h.semantic >= 0.55


def test_the_session_holding_most_of_the_request_together_is_told():
    hits = [
        hit(1, "a", "pool leak"),  # alone holds half: with its other line, all four words
        hit(2, "b", "pool load"),
        hit(3, "a", "connect load"),
        hit(4, "b", "nothing"),
    ]
    (kept,) = focused([hits], held, WEIGHTS, {}, floor=0.5, most=1)
    assert [h.document.key for h in kept] == ["obs_1", "obs_3"]  # b's line of no word goes


def test_a_close_hit_admits_its_session_when_its_words_do_not():
    hits = [hit(1, "a", "pool"), hit(2, "b", "unrelated words", semantic=0.8)]
    (kept,) = focused([hits], held, WEIGHTS, {}, close=close, floor=0.7, most=1)
    assert [h.document.session_id for h in kept] == ["b"]


def test_sessions_admitted_alike_are_told_the_same_way_every_time():
    zeta, alpha = hit(1, "zeta", "x", semantic=0.9), hit(2, "alpha", "y", semantic=0.9)
    # Each first in one list: equal evidence, no words; the id settles it, whatever order
    # the lists come in (a set's order differs from one process to the next).
    for lists in ([[zeta, alpha], [alpha, zeta]], [[alpha, zeta], [zeta, alpha]]):
        kept = focused(lists, held, WEIGHTS, {}, close=close, most=1)
        assert {h.document.session_id for hits in kept for h in hits} == {"zeta"}


def test_nothing_is_told_when_no_session_is_a_candidate():
    hits = [hit(1, "a", "pool"), hit(2, "b", "leak")]
    assert focused([hits], held, WEIGHTS, {}, floor=0.5, most=1) == [[]]


def test_a_request_many_sessions_hold_alike_singles_none_out():
    """Boilerplate every session pastes ("For the code present, we get this error: …")
    would tell whichever session ranks first of several that say the same."""
    hits = [
        hit(1, "a", "pool leak connect"),
        hit(2, "b", "pool leak connect load"),
        hit(3, "c", "pool leak connect"),
        hit(4, "d", "pool"),
    ]
    # b holds all four words, a and c three of them: within a quarter of b's share.
    assert focused([hits], held, WEIGHTS, {}, floor=0.5, rivals=3, gap=0.25) == [[]]
    # Held to a tenth, a and c are no rivals of b: b is told.
    (kept,) = focused([hits], held, WEIGHTS, {}, floor=0.5, rivals=3, gap=0.1)
    assert [h.document.session_id for h in kept] == ["b"]
    # Two alike are not yet many.
    (kept,) = focused([hits[:2]], held, WEIGHTS, {}, floor=0.5, rivals=3, gap=0.25)
    assert [h.document.session_id for h in kept] == ["b"]


def test_a_session_close_in_meaning_is_told_whatever_its_rivals_in_words():
    hits = [
        hit(1, "a", "pool"),
        hit(2, "b", "pool"),
        hit(3, "c", "unrelated words", semantic=0.8),
    ]
    (kept,) = focused([hits], held, WEIGHTS, {}, close=close, floor=0.7, rivals=2, gap=0.1)
    assert [h.document.session_id for h in kept] == ["c"]


def test_a_request_many_sessions_are_close_to_in_meaning_alone_singles_none_out():
    """A build log pasted as a request is close in meaning to every build log pasted
    before, whatever it is about: the one that ranks first is no answer."""
    hits = [
        hit(1, "a", "restore complete", semantic=0.82),
        hit(2, "b", "build succeeded", semantic=0.76),
        hit(3, "c", "restore complete", semantic=0.72),
        hit(4, "d", "pool", semantic=0.3),
    ]
    assert focused([hits], held, WEIGHTS, {}, close=close, floor=0.7, close_rivals=3) == [[]]
    # Two close are not yet many: the closer is told.
    (kept,) = focused([hits[:2]], held, WEIGHTS, {}, close=close, floor=0.7, close_rivals=3)
    assert [h.document.session_id for h in kept] == ["a"]


def test_a_hair_over_the_cosine_does_not_single_out_a_session_others_nearly_match():
    """A request close to one session at 0.56 and to two others at 0.52 and 0.50 is about
    none of them in particular: the threshold alone would have told the first."""
    hits = [
        hit(1, "a", "sqlite path", semantic=0.56),
        hit(2, "b", "sqlite manager", semantic=0.52),
        hit(3, "c", "database path", semantic=0.50),
        hit(4, "d", "pool", semantic=0.30),
    ]
    assert focused(
        [hits], held, WEIGHTS, {}, close=close, floor=0.7, close_rivals=3, close_gap=0.1
    ) == [[]]
    # Without the gap only close hits are rivals: one is close, and it is told.
    (kept,) = focused(
        [hits], held, WEIGHTS, {}, close=close, floor=0.7, close_rivals=3, close_gap=0.0
    )
    assert [h.document.session_id for h in kept] == ["a"]
    # One that stands out by more than the gap is told.
    clear = [hit(1, "a", "sqlite path", semantic=0.66), *hits[1:]]
    (kept,) = focused(
        [clear], held, WEIGHTS, {}, close=close, floor=0.7, close_rivals=3, close_gap=0.1
    )
    assert [h.document.session_id for h in kept] == ["a"]


def test_a_session_nearly_as_close_rivals_only_when_it_holds_the_words_alike():
    """The request's words are evidence too: a session a hair less close in meaning that
    holds far fewer of them is no rival of one that holds most."""
    hits = [
        hit(1, "a", "pool leak", semantic=0.57),  # half the words: below the floor of 0.7
        hit(2, "b", "nothing said", semantic=0.53),
        hit(3, "c", "other words", semantic=0.52),
    ]
    (kept,) = focused(
        [hits], held, WEIGHTS, {}, close=close, floor=0.7, close_rivals=3, close_gap=0.1
    )
    assert [h.document.session_id for h in kept] == ["a"]
    alike = [
        hits[0],
        hit(2, "b", "pool leak", semantic=0.53),
        hit(3, "c", "leak pool", semantic=0.52),
    ]
    assert focused(
        [alike], held, WEIGHTS, {}, close=close, floor=0.7, close_rivals=3, close_gap=0.1
    ) == [[]]


def test_a_session_chosen_by_its_words_is_not_judged_by_rivals_in_meaning():
    hits = [
        hit(1, "a", "pool leak connect load"),
        hit(2, "b", "build succeeded", semantic=0.8),
        hit(3, "c", "restore complete", semantic=0.8),
        hit(4, "d", "restore complete", semantic=0.8),
    ]
    (kept,) = focused([hits], held, WEIGHTS, {}, close=close, floor=0.7, close_rivals=3)
    assert [h.document.session_id for h in kept] == ["a"]


def test_sessions_alike_in_meaning_leave_the_one_chosen_by_its_words():
    """A session close in meaning alone may rank above one whose words pass the floor (its
    hits rank higher): when meaning singles none out, the one chosen by its words is told."""
    hits = [
        hit(1, "a", "pool leak", semantic=0.8),
        hit(2, "a", "pool", semantic=0.8),
        hit(3, "a", "leak", semantic=0.8),
        hit(4, "c", "restore complete", semantic=0.8),
        hit(5, "d", "restore complete", semantic=0.8),
        hit(6, "e", "nothing"),
        hit(7, "b", "pool leak connect"),
    ]
    (kept,) = focused([hits], held, WEIGHTS, {}, close=close, floor=0.7, close_rivals=3)
    assert {h.document.session_id for h in kept} == {"b"}


def test_a_session_close_in_meaning_that_holds_the_words_is_judged_by_its_rivals():
    """The near-identical prompts a host pastes are close to one another too: meaning
    singles none of them out either."""
    hits = [
        hit(1, "a", "pool leak connect load"),
        hit(2, "b", "pool leak connect load"),
        hit(3, "c", "pool leak connect load", semantic=0.8),
    ]
    assert focused([hits], held, WEIGHTS, {}, close=close, floor=0.7, rivals=3, gap=0.1) == [[]]


def test_a_session_writing_the_requests_code_name_whole_is_told_before_one_holding_its_parts():
    """ "test_refresh_token_rotation" is four words to the index, and a session about
    refresh-token rotation holds them all, ranked higher; the session that wrote the test's
    name whole is the one the request is about."""
    weights = {"test": 0.4, "refresh": 1.5, "token": 1.3, "rotat": 2.0, "fail": 1.0}
    hits = [
        hit(1, "design", "refresh token rotat test fail"),
        hit(2, "flaky", "test_refresh_token_rotation fail"),
        hit(3, "other", "nothing"),
    ]

    def terms(h: Hit) -> set[str]:
        return {w for part in h.document.summary.split() for w in part.split("_")} | {
            "rotat" for part in h.document.summary.split() if "rotation" in part
        }

    def named(h: Hit) -> tuple[str, ...]:
        return ("test_refresh_token_rotation",) if "test_refresh" in h.document.summary else ()

    (kept,) = focused([hits], terms, weights, {}, floor=0.5, most=1)
    assert {h.document.session_id for h in kept} == {"design"}  # by rank and share alone
    (kept,) = focused(
        [hits],
        terms,
        weights,
        {},
        named=named,
        names=("test_refresh_token_rotation",),
        floor=0.5,
        most=1,
    )
    assert {h.document.session_id for h in kept} == {"flaky"}


def test_the_one_session_writing_the_requests_code_name_is_singled_out_among_rivals():
    """Three sessions holding the request's words about alike single none out; the one of
    them that alone writes the request's code name whole is the one it is about."""
    hits = [
        hit(1, "a", "pool leak connect"),
        hit(2, "b", "pool leak connect"),
        hit(3, "c", "pool leak connect PgPool_release"),
        hit(4, "d", "nothing"),
    ]

    def named(h: Hit) -> tuple[str, ...]:
        return ("PgPool_release",) if "PgPool_release" in h.document.summary else ()

    assert focused([hits], held, WEIGHTS, {}, floor=0.5, rivals=3, gap=0.1) == [[]]
    (kept,) = focused(
        [hits], held, WEIGHTS, {}, named=named, names=("PgPool_release",), floor=0.5, rivals=3
    )
    assert {h.document.session_id for h in kept} == {"c"}
