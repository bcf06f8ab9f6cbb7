"""Live updates: a hand edit of the board and a new event show without a reload, and
nothing that lands between the page and its stream, or between two streams, is lost."""

from __future__ import annotations

import re

import httpx

from tests.helpers import envelope
from tests.viewer.conftest import SECRET, _edit_board_line

BEARER = {"Authorization": f"Bearer {SECRET}"}


def _seen_of(seeded, path: str) -> str:
    """The mark a page was rendered after (its ``data-seen``)."""
    html = httpx.get(f"{seeded.url}{path}", headers=BEARER, timeout=30).text
    found = re.search(r'<main id="page"[^>]* data-seen="([^"]*)"', html)
    assert found and found[1], "the page carries no data-seen mark"
    return found[1]


def _stream(seeded, *, until: str, seen: str | None = None, resume: str | None = None):
    """The messages of one ``/live`` stream, read until one named ``until`` (or the stream
    ends): each as its fields."""
    headers = {**BEARER, **({"Last-Event-ID": resume} if resume else {})}
    params = {"seen": seen} if seen else {}
    messages: list[dict[str, str]] = []
    with httpx.stream(
        "GET", f"{seeded.url}/live", params=params, headers=headers, timeout=30
    ) as answer:
        answer.raise_for_status()
        fields: dict[str, str] = {}
        for line in answer.iter_lines():
            if line:
                name, _, value = line.partition(": ")
                fields[name] = value
                continue
            if "event" in fields:
                messages.append(fields)
                if fields["event"] == until:
                    break
            fields = {}
    return messages


def _retitle(seeded, row: str, topic: str) -> None:
    """A person gives a board row a new topic in Obsidian."""
    text = seeded.board_file.read_text(encoding="utf-8")
    line = next(line for line in text.split("\n") if line.startswith(f"| {row} "))
    _edit_board_line(seeded, row, f"| {line.split('|')[3].strip()} |", f"| {topic} |")


def _prompt(n: int, prompt: str) -> dict:
    """A prompt of the checkout session, as the hook sends it."""
    return envelope("host-checkout", n, hookType="prompt_submit", data={"prompt": prompt})


def test_a_hand_edit_of_the_board_shows_without_a_reload(page, seeded):
    page.goto(f"{seeded.url}/")
    page.wait_for_selector("#live-state.on")
    page.evaluate("window.__sameDocument = true")
    _retitle(seeded, seeded.rows["continuing"], "Edited by hand in Obsidian")
    page.wait_for_selector("text=Edited by hand in Obsidian", timeout=10_000)
    assert page.evaluate("window.__sameDocument === true")  # no reload: the same document


def test_a_new_event_shows_in_its_session_timeline_without_a_reload(page, seeded):
    page.goto(f"{seeded.url}/sessions/host-checkout")
    page.wait_for_selector("#live-state.on")
    page.evaluate("window.__sameDocument = true")
    seeded.api.post("/observe", json=_prompt(99, "Now open the pull request")).raise_for_status()
    page.wait_for_selector("text=Prompt: Now open the pull request", timeout=10_000)
    assert page.evaluate("window.__sameDocument === true")


def test_a_click_pressed_while_the_page_refreshes_still_follows_its_link(page, seeded):
    """A live refresh that lands between a press and its release must not swallow the
    click: the page holds the refresh until the pointer is up."""
    # The last page of a session follows new events; its pager links to the first. A
    # session of its own: the other tests count the events of theirs.
    many = [envelope("host-press", n) for n in range(30)]
    seeded.api.post("/observe/bulk", json={"observations": many}).raise_for_status()
    page.goto(f"{seeded.url}/sessions/host-press?after=5&limit=1000")
    page.wait_for_selector("#live-state.on")
    target = page.locator("p.pager a", has_text="first")
    href = target.get_attribute("href") or ""
    target.scroll_into_view_if_needed()
    box = target.bounding_box()
    assert box is not None and "after=" not in href
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    event = envelope("host-press", 1_000, data={"tool_name": "Bash", "tool_output": "late"})
    seeded.api.post("/observe", json=event).raise_for_status()
    # The refresh arrives while the button is held: swapped in (the click would be lost)
    # or held back until the release.
    page.wait_for_selector("body[data-reloaded], body[data-held]", state="attached")
    page.mouse.up()
    page.wait_for_url(f"{seeded.url}{href}", timeout=10_000)


def test_an_event_stored_before_the_stream_opens_is_told(seeded):
    """The page was rendered, then an event landed, then the page opened its stream: the
    stream starts from the page's mark, so the event is told at once."""
    seen = _seen_of(seeded, "/sessions/host-checkout")
    event = envelope("host-between", 1, data={"tool_name": "Bash", "tool_output": "between"})
    seeded.api.post("/observe", json=event).raise_for_status()
    messages = _stream(seeded, seen=seen, until="events")
    hello, told = messages[0], messages[-1]
    assert hello["event"] == "hello" and hello["id"] == seen
    assert told["event"] == "events", messages
    assert "host-between" in told["data"]
    assert int(told["id"].split("/")[0]) > int(seen.split("/")[0])


def test_a_stream_opened_again_tells_what_landed_in_between(seeded):
    """A stream ends and the browser opens another, sending the last id it was given: an
    event and a board edit that landed between the two are told by the new one."""
    first = _stream(seeded, until="hello")
    left_at = first[-1]["id"]
    # The hand edit first: the event's session gets a board row, which the server writes
    # into the same file, and a person's edit is not meant to race it.
    _retitle(seeded, seeded.rows["stale"], "Edited between two streams")
    event = envelope("host-gap", 1, data={"tool_name": "Bash", "tool_output": "in the gap"})
    seeded.api.post("/observe", json=event).raise_for_status()
    messages = _stream(seeded, resume=left_at, until="board")
    names = [m["event"] for m in messages]
    assert names == ["hello", "events", "board"], messages
    assert "host-gap" in messages[1]["data"]


def test_a_mark_that_is_not_a_pages_is_refused(seeded):
    answer = httpx.get(f"{seeded.url}/live", params={"seen": "soon"}, headers=BEARER, timeout=30)
    assert answer.status_code == 400
    assert "seen" in answer.text
    # A mark past the newest event (a store emptied since) starts from now.
    hello = _stream(seeded, seen="999999999/none", until="hello")[0]
    assert int(hello["id"].split("/")[0]) < 999999999


def test_a_new_event_stored_while_the_page_opens_its_stream_shows(page, seeded):
    """The event lands after the page was rendered and before its stream is read (the
    stream's request is held until then): it still shows, without a reload."""
    posted = []

    def hold(route):
        if not posted:
            event = _prompt(98, "Then tag the release")
            seeded.api.post("/observe", json=event).raise_for_status()
            posted.append(event)
        route.continue_()

    page.route("**/live*", hold)
    page.goto(f"{seeded.url}/sessions/host-checkout")
    page.evaluate("window.__sameDocument = true")
    page.wait_for_selector("text=Prompt: Then tag the release", timeout=10_000)
    assert posted and page.evaluate("window.__sameDocument === true")
