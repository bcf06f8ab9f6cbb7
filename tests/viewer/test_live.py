"""Live updates: a hand edit of the board and a new event show without a reload."""

from __future__ import annotations

from tests.helpers import envelope
from tests.viewer.conftest import _edit_board_line


def test_a_hand_edit_of_the_board_shows_without_a_reload(page, seeded):
    page.goto(f"{seeded.url}/")
    page.wait_for_selector("#live-state.on")
    page.evaluate("window.__sameDocument = true")
    row = seeded.rows["continuing"]
    text = seeded.board_file.read_text(encoding="utf-8")
    line = next(line for line in text.split("\n") if line.startswith(f"| {row} "))
    topic = line.split("|")[3].strip()
    _edit_board_line(seeded, row, f"| {topic} |", "| Edited by hand in Obsidian |")
    page.wait_for_selector("text=Edited by hand in Obsidian", timeout=10_000)
    assert page.evaluate("window.__sameDocument === true")  # no reload: the same document


def test_a_new_event_shows_in_its_session_timeline_without_a_reload(page, seeded):
    page.goto(f"{seeded.url}/sessions/host-checkout")
    page.wait_for_selector("#live-state.on")
    page.evaluate("window.__sameDocument = true")
    event = envelope(
        "host-checkout",
        99,
        hookType="prompt_submit",
        data={"prompt": "Now open the pull request"},
    )
    seeded.api.post("/observe", json=event).raise_for_status()
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
