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
