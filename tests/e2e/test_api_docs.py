"""The API docs (`/docs`, `/redoc`) work with no network: the pages and every asset they
load are served by memvault itself, public like the docs, and need no inline script, so
the foreign-Origin guard and a strict Content-Security-Policy leave them working."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

SECRET = "docs-s3cret-value"
PAGES = ["/docs", "/redoc"]


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    from tests.helpers import Server

    running = Server(tmp_path_factory.mktemp("docs") / "home", {"MEMVAULT_SECRET": SECRET})
    yield running.start()
    running.stop()


class _Page(HTMLParser):
    """The URLs a page loads (scripts, stylesheets, icons, a spec) and its inline scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.inline_scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "script":
            self._in_script = not found.get("src")
        for name in ("src", "href", "spec-url"):
            if found.get(name) and (tag != "a" or name != "href"):
                self.urls.append(found[name])

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline_scripts.append(data.strip())


def _parsed(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


@pytest.mark.parametrize("path", PAGES)
def test_a_docs_page_loads_only_assets_memvault_serves_itself(secured, path):
    # No bearer header: the docs stay public when a secret is set.
    page_url = f"{secured.url}{path}"
    answer = httpx.get(page_url)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/html")
    page = _parsed(answer.text)
    assert page.urls, "the page loads nothing: it cannot render"
    scripts = [u for u in page.urls if u.endswith(".js")]
    assert scripts, page.urls
    own = urlsplit(secured.url).netloc
    for url in page.urls:
        absolute = urljoin(page_url, url)
        assert urlsplit(absolute).netloc == own, f"{url} is not served by memvault"
        # A page's own requests carry its Origin (a POST from Swagger UI's "Try it out"
        # does); the guard takes it for the server's own.
        asset = httpx.get(absolute, headers={"Origin": secured.url})
        assert asset.status_code == 200, f"{url}: {asset.status_code}"
        assert asset.content, url
    assert not page.inline_scripts, "a strict CSP blocks inline script"


def test_swagger_ui_is_told_the_local_document_and_no_outside_validator(secured):
    page = _parsed(httpx.get(f"{secured.url}/docs").text)
    (init,) = [u for u in page.urls if u.endswith("init.js")]
    script = httpx.get(urljoin(f"{secured.url}/docs", init)).text
    assert '"url": "/openapi.json"' in script
    # Swagger UI sends the document to validator.swagger.io unless told not to.
    assert '"validatorUrl": null' in script
