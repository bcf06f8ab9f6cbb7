"""The secret: asked for once at the viewer's door and kept in a strict cookie, which the
viewer's pages accept and the API does not; the browser guards stay."""

from __future__ import annotations

import httpx

from tests.viewer.conftest import SECRET


def test_the_viewer_asks_for_the_secret_once_and_keeps_it_in_a_strict_cookie(browser, seeded):
    fresh = browser.new_context()
    try:
        tab = fresh.new_page()
        tab.goto(f"{seeded.url}/fragments")
        assert tab.url.startswith(f"{seeded.url}/login?next=/fragments")
        assert tab.locator("table").count() == 0  # nothing of the memory before the door
        tab.fill("input[name=secret]", "not-the-secret")
        tab.click("form.door button")
        tab.wait_for_selector("#wrong")
        assert fresh.cookies() == []
        tab.fill("input[name=secret]", SECRET)
        tab.click("form.door button")
        tab.wait_for_url(f"{seeded.url}/fragments")
        (cookie,) = fresh.cookies()
        assert cookie["httpOnly"] is True
        assert cookie["sameSite"] == "Strict"
        assert SECRET not in cookie["value"]
        assert tab.evaluate("document.cookie") == ""  # script cannot read it
        tab.goto(f"{seeded.url}/health")  # asked once: the next page opens at once
        assert tab.url == f"{seeded.url}/health"
    finally:
        fresh.close()


def test_the_cookie_opens_the_viewer_and_never_the_api(context, seeded):
    (cookie,) = context.cookies()
    jar = {cookie["name"]: cookie["value"]}
    with httpx.Client(base_url=seeded.url, cookies=jar, timeout=10) as with_cookie:
        assert with_cookie.get("/sessions").status_code == 200
        assert with_cookie.get("/agentmemory/sessions").status_code == 401
        assert with_cookie.post("/agentmemory/search", json={"query": "x"}).status_code == 401
        assert with_cookie.get("/openapi.json").status_code == 200  # public as before
    bearer = {"Authorization": f"Bearer {SECRET}"}
    with httpx.Client(base_url=seeded.url, timeout=10) as plain:
        assert plain.get("/agentmemory/sessions", headers=bearer).status_code == 200
        assert plain.get("/sessions", headers=bearer).status_code == 200
        assert plain.get("/sessions", follow_redirects=False).status_code == 303
        assert plain.get("/live").status_code == 401
    with httpx.Client(base_url=seeded.url, cookies={"memvault_viewer": "0" * 64}) as forged:
        assert forged.get("/health", follow_redirects=False).status_code == 303


def test_the_origin_and_host_checks_apply_to_the_viewer(context, seeded):
    (cookie,) = context.cookies()
    jar = {cookie["name"]: cookie["value"]}
    with httpx.Client(base_url=seeded.url, cookies=jar, timeout=10) as client:
        foreign = client.post(
            "/login", data={"secret": SECRET}, headers={"Origin": "http://evil.example"}
        )
        assert foreign.status_code == 403
        assert client.get("/", headers={"Host": "evil.example"}).status_code == 421


def test_every_page_has_a_strict_content_security_policy_and_is_light(context, seeded):
    (cookie,) = context.cookies()
    jar = {cookie["name"]: cookie["value"]}
    with httpx.Client(base_url=seeded.url, cookies=jar, timeout=10) as client:
        css = client.get("/static/viewer.css")
        js = client.get("/static/viewer.js")
        assets = len(css.content) + len(js.content)
        for path in (
            "/",
            "/sessions",
            "/sessions/host-checkout",
            "/search?q=checkout",
            "/fragments",
            "/health",
            "/login",
        ):
            answer = client.get(path)
            assert answer.status_code == 200, path
            policy = answer.headers["content-security-policy"]
            assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
            assert "<script>" not in answer.text and " style=" not in answer.text
            assert "http://" not in answer.text.replace(seeded.url, "")  # nothing from elsewhere
            transferred = int(answer.headers.get("content-length") or len(answer.content))
            assert transferred + assets < 100_000, (path, transferred, assets)
