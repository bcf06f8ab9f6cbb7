"""Each page of the viewer, in Chromium, against a real server holding real data."""

from __future__ import annotations

import re

from memvault.domain import BoardRow
from memvault.vault.board import Board, row_cells
from memvault.vault.table import format_row
from tests.helpers import Server, envelope, wait_for
from tests.viewer.conftest import HOSTILE, shoot


def test_board_shows_the_rows_of_the_board_file_with_status_filters(page, seeded):
    page.goto(f"{seeded.url}/")
    board = page.locator("table.board tbody")
    for session_id in seeded.rows.values():
        assert board.locator(f"td:first-child a:text-is('{session_id}')").count() == 1
    stale = page.locator(f"tr:has(a:text-is('{seeded.rows['stale']}'))")
    assert "row-stale" in (stale.get_attribute("class") or "")
    source = page.locator(f"tr:has(td:first-child a:text-is('{seeded.rows['source']}'))")
    assert source.locator(".badge.ref").inner_text() == "referenced"
    # Referenced By is a link to the row that continues it.
    source.get_by_role("link", name=seeded.rows["continuing"]).click()
    page.wait_for_url(re.compile(re.escape(seeded.rows["continuing"])))
    page.goto(f"{seeded.url}/?status=stale")
    rows = page.locator("table.board tbody tr")
    assert rows.count() == 1
    assert seeded.rows["stale"] in rows.inner_text()
    page.goto(f"{seeded.url}/")
    shoot(page, "board")


def test_a_board_row_renders_its_snapshot_and_links_what_it_continues(page, seeded):
    page.goto(f"{seeded.url}/board/{seeded.rows['source']}")
    snapshot = page.locator("#snapshot")
    assert "The retry in the payment mock is gone." in snapshot.inner_text()
    assert "Keep the mock without retries" in snapshot.inner_text()
    assert page.locator("#referenced a").inner_text() == seeded.rows["continuing"]
    page.goto(f"{seeded.url}/board/{seeded.rows['continuing']}")
    link = page.locator("#continues a")
    assert link.inner_text() == seeded.rows["source"]
    link.click()
    page.wait_for_url(f"{seeded.url}/board/{seeded.rows['source']}")
    shoot(page, "board-row")


def test_the_timeline_shows_a_session_in_order_with_summary_watermarks_and_board_row(page, seeded):
    page.goto(f"{seeded.url}/sessions")
    page.get_by_role("link", name="host-checkout", exact=True).click()
    page.wait_for_url(f"{seeded.url}/sessions/host-checkout")
    kinds = page.locator("table.timeline tbody tr td:nth-child(3)").all_inner_texts()
    assert kinds[:5] == ["prompt", "tool", "failure", "response", "response"]
    assert "Prompt: Fix the flaky checkout test" in page.locator("table.timeline").inner_text()
    assert "Bash failed: 2 failed" in page.locator("table.timeline").inner_text()
    given = page.locator("table.timeline tr.k-injection")
    assert given.count() == 1  # the memory injected, and when
    assert "Memory given (UserPromptSubmit)" in given.inner_text()
    fields = page.locator("table.fields").first.inner_text()
    assert "summarized: #" in fields  # the pipeline summarized it: its watermark moved
    assert "not summarized yet" not in page.locator("#summary").inner_text()
    board_id = seeded.api.get("/sessions").json()["sessions"]
    row = next(s for s in board_id if s["id"] == "host-checkout")["memorySessionId"]
    assert page.get_by_role("link", name=row).count() == 1
    shoot(page, "timeline")
    page.get_by_role("link", name=row).click()  # the board row it feeds
    page.wait_for_url(f"{seeded.url}/board/{row}")
    given = page.locator("#given").inner_text()
    assert "UserPromptSubmit" in given and "fragment" in given


def test_a_long_timeline_is_paged_by_sequence(page, seeded):
    page.goto(f"{seeded.url}/sessions/host-long?limit=200")
    first = page.locator("table.timeline tbody tr")
    assert first.count() == 200
    seqs = [int(s) for s in page.locator("table.timeline tbody td:first-child").all_text_contents()]
    assert seqs == sorted(seqs)
    page.locator("#next").click()
    page.wait_for_url(re.compile(rf"after={seqs[-1]}"))
    second = [
        int(s) for s in page.locator("table.timeline tbody td:first-child").all_text_contents()
    ]
    assert len(second) == 200 and second[0] > seqs[-1]
    page.locator("#next").click()
    third = page.locator("table.timeline tbody tr")
    assert third.count() == 50
    assert page.locator("#next").count() == 0  # the last page


def test_a_link_scrolled_to_stays_where_it_was_shown(page, seeded):
    """Rows laid out only when they come into view would move the pager under the pointer
    that aims at it: the timeline is laid out whole, once."""
    page.goto(f"{seeded.url}/sessions/host-long?after=5&limit=1000")
    target = page.locator("p.pager a", has_text="first")
    target.scroll_into_view_if_needed()
    shown = target.bounding_box()
    assert shown is not None
    at = (shown["x"] + shown["width"] / 2, shown["y"] + shown["height"] / 2)
    under = "([x, y]) => document.elementFromPoint(x, y)?.closest('p.pager a')?.textContent"
    page.wait_for_timeout(300)  # a few frames: what was not laid out yet is by now
    assert page.evaluate(under, at) == target.text_content()
    assert target.bounding_box() == shown


def test_search_breaks_each_score_down_and_drills_from_l0_to_l2(page, seeded):
    page.goto(f"{seeded.url}/search")
    page.fill("input[name=q]", "payment mock retries")
    page.select_option("select[name=kind]", "fragment")
    page.fill("input[name=project]", "demo-app")
    page.click("form.search button")
    page.wait_for_url(re.compile(r"/search\?q=payment"))
    hit = page.locator("table.hits tbody tr").first
    cells = hit.locator("td").all_inner_texts()
    score, relevance, importance, recency = (float(c.strip()) for c in cells[:4])
    assert abs(score - (0.5 * relevance + 0.3 * importance + 0.2 * recency)) < 0.002
    assert "fragment" in cells[4]
    assert all("billing" not in c for c in page.locator("table.hits tbody").all_inner_texts())
    shoot(page, "search")
    hit.locator("td:nth-child(6) a").click()
    page.wait_for_url(re.compile(r"/memory/"))
    assert "Remove the retry in the mock." in page.locator("#body").inner_text()
    others = page.locator("ul.others").inner_text()
    assert "Checkout uses the staging card" in others
    assert page.locator("#l2").count() == 1


def test_fragments_are_listed_by_project_with_an_obsidian_link(page, seeded):
    page.goto(f"{seeded.url}/fragments")
    headings = page.locator("main h2").all_inner_texts()
    assert any(h.startswith("billing") for h in headings)
    assert any(h.startswith("demo-app") for h in headings)
    link = page.locator("a.obsidian").first
    href = link.get_attribute("href") or ""
    assert href.startswith(f"obsidian://open?vault={seeded.vault.name}&file=agent-memory%2F")
    assert (seeded.vault / link.inner_text()).is_file()
    head = page.locator("table.fragments thead").first.inner_text()
    for column in ("Importance", "Reads", "Last read", "State"):
        assert column in head
    shoot(page, "fragments")


def test_health_shows_store_queue_index_embedder_llm_and_the_ingest_chart(page, seeded):
    page.goto(f"{seeded.url}/health")
    text = page.locator("main").inner_text()
    for part in (
        "sqlite",
        "Jobs pending",
        "Events not indexed",
        "Rewritten observations not read again",
        "Spooled",
        "RSS",
        "Embedder",
    ):
        assert part in text, part
    bars = page.locator("#chart rect")
    assert bars.count() == 60
    heights = [float(b.get_attribute("height") or 0) for b in bars.all()]
    assert max(heights) > 0  # this server stored events within the hour
    shoot(page, "health")


def test_pages_hold_hostile_text_as_text(page, seeded):
    page.goto(f"{seeded.url}/sessions/host-hostile")
    shown = page.locator("table.timeline").inner_text()
    assert "Bash: <script>window.__pwned = 1</script><img" in shown
    assert "[open me](javascript:window.__pwned=3)" in shown
    assert "javascript:alert(1)" in (page.locator("table.timeline pre").text_content() or "")
    page.goto(f"{seeded.url}/board/{seeded.rows['source']}")
    assert HOSTILE in page.locator("#snapshot").inner_text()
    page.goto(f"{seeded.url}/fragments?project=billing")
    assert "Hostile fragment <script>" in page.locator("main").inner_text()
    page.goto(f"{seeded.url}/search?q=hostile+fragment")
    page.locator("table.hits a", has_text="Hostile").first.click()
    page.wait_for_url(re.compile(r"/memory/"))
    for url in (f"{seeded.url}/sessions/host-hostile", page.url):
        page.goto(url)
        assert page.locator("main script, main img, main [onerror]").count() == 0
        hrefs = page.eval_on_selector_all("a", "as => as.map(a => a.getAttribute('href'))")
        assert not [h for h in hrefs if h and h.strip().lower().startswith("javascript:")]
    shoot(page, "hostile")


def test_a_session_id_with_a_slash_and_markup_opens_its_timeline(page, seeded):
    odd = "team/alpha <b>x</b>"
    seeded.api.post("/observe", json=envelope(odd, 1)).raise_for_status()
    page.goto(f"{seeded.url}/sessions")
    page.locator("table a", has_text=odd).click()
    page.wait_for_selector("table.timeline tbody tr")
    assert page.locator("main h1").inner_text() == odd


def test_opening_a_fragment_in_the_viewer_does_not_count_as_a_read(page, seeded):
    def reads(memory_id: str) -> int:
        listed = seeded.api.get("/memories", params={"limit": 1000}).json()["memories"]
        return next(m["accessCount"] for m in listed if m["id"] == memory_id)

    chosen = seeded.api.get("/memories").json()["memories"][0]["id"]
    before = reads(chosen)
    page.goto(f"{seeded.url}/memory/{chosen}")
    assert page.locator("main").inner_text()
    # A read through the API is counted, after whatever the viewer's read queued: once it
    # shows, a count the viewer's read made would show too.
    seeded.api.get(f"/memories/{chosen}").raise_for_status()
    wait_for(lambda: reads(chosen) > before)
    assert reads(chosen) == before + 1


def test_a_long_board_shows_every_row_down_to_the_last(browser, tmp_path):
    """A board of 45 rows comes in bodies of 20 that the browser lays out when scrolled
    to: every row is there, in order, and the last one can be scrolled to and followed."""
    vault = tmp_path / "home" / "vault"
    ids = [f"2026-11-{1 + n % 28:02d}-{n:04d}-long-agent" for n in range(45)]
    lines = Board.parse(None).render() + "".join(
        format_row(
            row_cells(
                BoardRow(
                    sid,
                    "long-agent",
                    f"Topic {n}",
                    f"Work {n}.",
                    "long",
                    "active",
                    [],
                    "2026-11-30 10:00",
                    f"2026-11-30 10:{59 - n:02d}",
                )
            )
        )
        + "\n"
        for n, sid in enumerate(ids)
    )
    (vault / "memory").mkdir(parents=True)
    (vault / "memory" / "index.md").write_text(lines, encoding="utf-8")
    server = Server(tmp_path / "home", {"MEMVAULT_LANGUAGE": "en"}).start()
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{server.url}/")
        assert page.locator("table.board tbody").count() == 3
        shown = page.locator("table.board tbody td:first-child a").all_text_contents()
        assert shown == ids  # most recently updated first
        last = page.get_by_role("link", name=ids[-1], exact=True)
        last.scroll_into_view_if_needed()
        assert last.is_visible()
        last.click()
        page.wait_for_url(re.compile(re.escape(ids[-1])))
    finally:
        context.close()
        server.stop()
