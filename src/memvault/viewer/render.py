"""How every viewer page is answered: a Jinja template rendered with autoescape (memory
holds arbitrary text from tool outputs, so everything shown is escaped unless a template
says otherwise, and none does), the security headers, and gzip when the browser takes it."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from fastapi import Request, Response
from jinja2 import Environment, PackageLoader

from memvault.domain import Document
from memvault.memory import Memory

# No inline script or style anywhere: scripts and styles come from /static/ only.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",  # "no-referrer" would make a form post's Origin "null"
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}
GZIP_FROM = 1400  # bytes; a smaller page goes as it is
NAV = (
    ("/", "Board"),
    ("/sessions", "Sessions"),
    ("/search", "Search"),
    ("/fragments", "Fragments"),
    ("/cost", "Cost"),
    ("/health", "Health"),
)


def memory_of(request: Request) -> Memory:
    return request.app.state.memory


def path_part(text: str) -> str:
    """An id as one path segment of a link (a slash kept only where ids hold one)."""
    return quote(text, safe="")


def obsidian_link(vault_name: str, path: str) -> str:
    """``obsidian://open`` for a file of the vault, by the vault folder's name."""
    return f"obsidian://open?vault={quote(vault_name, safe='')}&file={quote(path, safe='')}"


def obsidian(memory: Memory, document: Document) -> str | None:
    """The ``obsidian://`` link to a fragment's file: the vault by its folder's name, the
    file by its path inside the vault."""
    if document.kind != "fragment" or not document.key:
        return None
    # The folder's own name, as Obsidian names a vault: `.` or a link resolved first.
    return obsidian_link(memory.settings.vault_path.resolve().name, document.key)


def when(value: str | None) -> str:
    """A stored UTC time, shortened to the minute for a table cell."""
    if not value:
        return ""
    return value.replace("T", " ")[:16] if len(value) >= 16 else value


def size(value: int | None) -> str:
    if value is None:
        return "?"
    amount = float(value)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if amount < 1024 or unit == "GiB":
            return f"{amount:.0f} {unit}" if unit == "B" else f"{amount:.1f} {unit}"
        amount /= 1024
    return f"{value} B"


def as_json(value: Any) -> str:
    """A payload as indented JSON text, to show in a <pre> (escaped there like any text)."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("memvault.viewer", "templates"),
        autoescape=True,  # every value, whatever the template's name
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(path_part=path_part, when=when, size=size, as_json=as_json, quote=quote)
    env.globals.update(nav=NAV)
    return env


TEMPLATES = _environment()


def page(
    request: Request,
    template: str,
    *,
    title: str,
    live: str = "",
    code: int = 200,
    **context: Any,
) -> Response:
    """The page ``template`` renders. ``live`` names what changes it (``board``,
    ``events``, ``session:<id>``): the page's script reloads it when the server says so."""
    memory = memory_of(request)
    html = TEMPLATES.get_template(template).render(
        title=title,
        live=live,
        seen=getattr(request.state, "seen", ""),
        here=request.url.path,
        locked=memory.settings.secret_value() is not None,
        now=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        **context,
    )
    return html_response(request, html, status=code)


def html_response(request: Request, html: str, *, status: int = 200) -> Response:
    body = html.encode()
    headers = dict(HEADERS)
    if len(body) >= GZIP_FROM and "gzip" in request.headers.get("accept-encoding", ""):
        body = gzip.compress(body, compresslevel=6)
        headers["content-encoding"] = "gzip"
        headers["vary"] = "Accept-Encoding"
    return Response(body, status_code=status, headers=headers, media_type="text/html")
