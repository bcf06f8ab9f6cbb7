"""One real server with a secret for all the viewer tests a worker runs (what a test adds,
a live event or a hand edit, no other test depends on) and one Chromium a module: the
store is filled through the REST API, the board edited on disk as a person would, and
every page read in the browser. Screenshots go to test-artifacts/viewer/."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from tests.helpers import Server, envelope, require_tool, wait_for

SECRET = "viewer-test-secret-7f3a"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "viewer"
HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
HOSTILE_LINK = "[open me](javascript:window.__pwned=3) javascript:alert(1)"


class Seeded:
    """What the suite put in the store, by name."""

    def __init__(self, server: Server, api: httpx.Client) -> None:
        self.server = server
        self.api = api
        self.url = server.url
        self.vault = server.home / "vault"
        self.board_file = self.vault / "memory" / "index.md"
        self.rows: dict[str, str] = {}


def _event(session: str, n: int, hook: str, data: dict, project: str = "demo-app") -> dict:
    return envelope(session, n, hookType=hook, data=data, project=project)


def _seed(server: Server) -> Seeded:
    api = httpx.Client(
        base_url=f"{server.url}/agentmemory",
        headers={"Authorization": f"Bearer {SECRET}"},
        timeout=30,
    )
    seeded = Seeded(server, api)
    # A host session with a prompt, a tool call, a failure and a response, then a turn end.
    start = {"sessionId": "host-checkout", "project": "demo-app", "cwd": "/home/dev/demo-app"}
    api.post("/session/start", json={**start, "agentId": "claude-code"}).raise_for_status()
    events = [
        _event("host-checkout", 1, "prompt_submit", {"prompt": "Fix the flaky checkout test"}),
        envelope("host-checkout", 2),
        _event(
            "host-checkout",
            3,
            "post_tool_failure",
            {"tool_name": "Bash", "tool_input": {"command": "npm test"}, "error": "2 failed"},
        ),
        _event(
            "host-checkout",
            4,
            "assistant_response",
            {"response": "The payment mock retried; I removed the retry."},
        ),
        _event("host-checkout", 5, "stop", {"last_assistant_message": "Done"}),
    ]
    answer = api.post("/observe/bulk", json={"observations": events})
    answer.raise_for_status()
    # Hostile text, as a tool's output can hold anything.
    hostile = _event(
        "host-hostile",
        1,
        "post_tool_use",
        {"tool_name": "Bash", "tool_input": {"command": HOSTILE}, "tool_output": HOSTILE_LINK},
    )
    api.post("/observe", json=hostile).raise_for_status()
    # A session long enough to page: 450 events.
    many = [envelope("host-long", n) for n in range(450)]
    api.post("/observe/bulk", json={"observations": many[:250]}).raise_for_status()
    api.post("/observe/bulk", json={"observations": many[250:]}).raise_for_status()
    # Fragments in two projects, one with hostile text.
    for project, summary, content in (
        ("demo-app", "Payment mock retries made checkout flaky", "Remove the retry in the mock."),
        ("demo-app", "Checkout uses the staging card", "Use card 4242 in staging only."),
        ("billing", "Invoices round half up", "Rounding is half up, in cents."),
        ("billing", "Hostile fragment " + HOSTILE, HOSTILE_LINK),
    ):
        body = {"project": project, "summary": summary, "content": content, "importance": 0.7}
        api.post("/remember", json=body).raise_for_status()
    # Board rows: one registered by hand with a snapshot, one continuing it, one to be stale.
    first = api.post(
        "/board/register",
        json={
            "agentName": "claude-code-main-agent",
            "manual": True,
            "topic": "Flaky checkout test",
            "summary": "The payment mock retried",
            "sections": {
                "Current Context": "The retry in the payment mock is gone.",
                "Decisions": ["Keep the mock without retries"],
                "Next Actions": ["Remove the skip in CI", HOSTILE],
            },
        },
    ).json()
    seeded.rows["source"] = first["sessionId"]
    second = api.post(
        "/board/continue",
        json={"source": first["sessionId"], "agentName": "cursor-main-agent"},
    ).json()
    seeded.rows["continuing"] = second["sessionId"]
    third = api.post(
        "/board/register",
        json={
            "agentName": "codex-main-agent",
            "manual": True,
            "topic": "Old migration",
            "sections": {"Current Context": "Waiting on review."},
        },
    ).json()
    seeded.rows["stale"] = third["sessionId"]
    _edit_board_line(seeded, third["sessionId"], "| active |", "| stale |")
    # Memory given to the checkout session, as a prompt's hook asks for it.
    given = {
        "project": "demo-app",
        "query": "payment mock retries",
        "sessionId": "host-checkout",
        "hookEvent": "UserPromptSubmit",
    }
    api.post("/context", json=given).raise_for_status()
    # The summary of the checkout session, made by the pipeline now.
    api.post("/summarize", json={"sessionId": "host-checkout"}).raise_for_status()
    api.post("/jobs/run").raise_for_status()
    return seeded


def _edit_board_line(seeded: Seeded, session_id: str, old: str, new: str) -> None:
    """Change one row of memory/index.md by hand, as a person in Obsidian would."""
    text = seeded.board_file.read_text(encoding="utf-8")
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line.startswith(f"| {session_id} "):
            assert old in line, line
            lines[index] = line.replace(old, new, 1)
            break
    else:
        raise AssertionError(f"{session_id} is not on the board:\n{text}")
    seeded.board_file.write_text("\n".join(lines), encoding="utf-8")


@pytest.fixture(scope="session")
def seeded(tmp_path_factory) -> Seeded:
    server = Server(
        tmp_path_factory.mktemp("viewer") / "home",
        {
            "MEMVAULT_SECRET": SECRET,
            "MEMVAULT_BOARD_POLL_SECONDS": "0.2",
            "MEMVAULT_LANGUAGE": "en",
        },
    ).start()
    try:
        yield _seed(server)
    finally:
        server.stop()


# Module scope: Playwright's sync API keeps an event loop running while it is open, which
# would stop the asyncio tests that run after these in the same process.
@pytest.fixture(scope="module")
def browser():
    chromium = require_tool("chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium, args=["--no-sandbox", "--disable-gpu"]
        )
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def context(browser, seeded):
    """A browser that gave the secret once, at the door."""
    made = browser.new_context(viewport={"width": 1280, "height": 900})
    page = made.new_page()
    page.goto(f"{seeded.url}/")
    page.fill("input[name=secret]", SECRET)
    page.click("form.door button")
    page.wait_for_url(f"{seeded.url}/")
    page.close()
    yield made
    made.close()


@pytest.fixture
def page(context, seeded):
    """A fresh tab; it fails the test if the page broke its Content-Security-Policy, ran
    a dialog or threw."""
    tab = context.new_page()
    trouble: list[str] = []
    tab.on("console", lambda m: m.type == "error" and trouble.append(m.text))
    tab.on("pageerror", lambda e: trouble.append(str(e)))
    tab.on("response", lambda r: r.status >= 400 and trouble.append(f"{r.status} {r.url}"))
    tab.on("dialog", lambda d: (trouble.append(f"dialog: {d.message}"), d.dismiss()))
    yield tab
    assert not [t for t in trouble if not _expected(t)], trouble
    assert tab.evaluate("window.__pwned === undefined")
    tab.close()


def _expected(message: str) -> bool:
    # The hostile <img src=x> is shown as text, so nothing loads it; a stream cut at
    # the end of the test is the browser's own noise.
    return bool(re.search(r"net::ERR_ABORTED|EventSource", message))


def shoot(tab, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    tab.screenshot(path=str(path), full_page=True)
    return path


__all__ = ["HOSTILE", "HOSTILE_LINK", "SECRET", "Seeded", "shoot", "wait_for"]
