"""The viewer's door when the server has a secret: the page asks for it once, and a right
answer leaves an HttpOnly, SameSite=Strict cookie (``Secure`` when the request came over
https) that the viewer's pages accept (the API keeps asking for the bearer header).

A client address gets ``ATTEMPTS_PER_MINUTE`` tries at the door a minute, right or wrong;
more are answered 429 without looking at the secret, so guessing it stays slow. A cookie
names when it was issued and is signed with the secret: changing the secret voids every
cookie, and so does signing out everywhere, which moves the home's "not before" time (the
modification time of ``viewer-logins-since`` in ``$MEMVAULT_HOME``) to now.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import threading
import time
from collections import deque
from pathlib import Path
from urllib.parse import parse_qs

from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse

from memvault.config import Settings
from memvault.viewer.render import memory_of, page

router = APIRouter(include_in_schema=False)
COOKIE = "memvault_viewer"
COOKIE_DAYS = 30
MAX_FORM_BYTES = 8192
ATTEMPTS_PER_MINUTE = 10
NOT_BEFORE_FILE = "viewer-logins-since"
_DAY_MS = 86_400_000
_CLOCK_SLACK_MS = 60_000  # a cookie from a moment ahead of this clock, as clocks step
_ADDRESSES_KEPT = 10_000  # addresses the attempt counter remembers at most


class Passes:
    """The door's cookies: ``<issued, ms>.<HMAC of it under the secret>``. One opens the
    viewer while the secret is the same, for ``COOKIE_DAYS``, when issued after the home's
    "not before" time."""

    def __init__(self, secret: str, home: Path) -> None:
        self._key = secret.encode()
        self.not_before_file = Path(home) / NOT_BEFORE_FILE

    @classmethod
    def of(cls, settings: Settings) -> Passes | None:
        secret = settings.secret_value()
        return None if secret is None else cls(secret, settings.home)

    def issue(self) -> str:
        issued = str(time.time_ns() // 1_000_000)
        return f"{issued}.{self._mac(issued)}"

    def opens(self, cookie_header: bytes) -> bool:
        """Whether the request's ``Cookie`` header holds a cookie of the door still good."""
        issued, _, mac = _cookie(cookie_header, COOKIE.encode()).partition(b".")
        if not issued.isdigit() or not hmac.compare_digest(mac, self._mac(issued).encode()):
            return False
        when, now = int(issued), time.time_ns() // 1_000_000
        return self.not_before() < when <= now + _CLOCK_SLACK_MS and (
            now - when < COOKIE_DAYS * _DAY_MS
        )

    def not_before(self) -> int:
        """Cookies issued at or before this time (ms) are void."""
        try:
            return os.stat(self.not_before_file).st_mtime_ns // 1_000_000
        except FileNotFoundError:
            return 0

    def void_all(self) -> None:
        """Sign out every browser: no cookie issued until now opens the viewer any more."""
        self.not_before_file.parent.mkdir(parents=True, exist_ok=True)
        self.not_before_file.touch()
        os.utime(self.not_before_file)

    def _mac(self, issued: str | bytes) -> str:
        text = issued.encode() if isinstance(issued, str) else issued
        return hmac.new(self._key, b"memvault viewer cookie " + text, hashlib.sha256).hexdigest()


class Attempts:
    """Tries at the door in the last minute, per client address."""

    def __init__(self, limit: int = ATTEMPTS_PER_MINUTE, window: float = 60.0) -> None:
        self.limit = limit
        self.window = window
        self._seen: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def wait(self, address: str) -> float:
        """Count a try from ``address``: 0 when it may go on, else the seconds until it may."""
        now = time.monotonic()
        with self._lock:
            if len(self._seen) >= _ADDRESSES_KEPT:
                self._forget(now)
            tries = self._seen.setdefault(address, deque())
            while tries and tries[0] <= now - self.window:
                tries.popleft()
            if len(tries) >= self.limit:
                return tries[0] + self.window - now
            tries.append(now)
            return 0.0

    def _forget(self, now: float) -> None:
        for address, tries in list(self._seen.items()):
            if not tries or tries[-1] <= now - self.window:
                del self._seen[address]
        if len(self._seen) >= _ADDRESSES_KEPT:  # all of them busy: start over
            self._seen.clear()


def _attempts(request: Request) -> Attempts:
    state = request.app.state
    found = getattr(state, "login_attempts", None)
    if found is None:
        found = state.login_attempts = Attempts()
    return found


def _next(target: str | None) -> str:
    """Where to go after the door: a page of this viewer, never another site."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


@router.get("/login")
def door(request: Request, next: str = "/") -> Response:
    if memory_of(request).settings.secret_value() is None:
        return RedirectResponse(_next(next), status_code=303)
    return page(request, "login.html", title="Secret", next=_next(next), wrong=False)


@router.post("/login")
async def enter(request: Request) -> Response:
    settings = memory_of(request).settings
    secret = settings.secret_value()
    body = await request.body()
    form = parse_qs(body[:MAX_FORM_BYTES].decode("utf-8", "replace"))
    given = (form.get("secret") or [""])[0]
    target = _next((form.get("next") or ["/"])[0])
    if secret is None:
        return RedirectResponse(target, status_code=303)
    wait = _attempts(request).wait(request.client.host if request.client else "")
    if wait:
        seconds = max(1, round(wait + 0.5))
        limit = f"at most {ATTEMPTS_PER_MINUTE} tries a minute from one address"
        answer = page(
            request,
            "login.html",
            title="Secret",
            next=target,
            wrong=False,
            code=429,
            limit=limit,
            wait=seconds,
        )
        answer.headers["Retry-After"] = str(seconds)
        return answer
    if not hmac.compare_digest(given.encode(), secret.encode()):
        return page(request, "login.html", title="Secret", next=target, wrong=True, code=401)
    answer = RedirectResponse(target, status_code=303)
    answer.set_cookie(
        COOKIE,
        Passes(secret, settings.home).issue(),
        max_age=COOKIE_DAYS * 86400,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",  # uvicorn trusts a loopback proxy's header
    )
    return answer


@router.post("/logout")
async def leave(request: Request) -> Response:
    """Lock this browser; with ``everywhere`` in the form, every browser (when this one's
    cookie still opens the viewer)."""
    passes = Passes.of(memory_of(request).settings)
    if passes is None:
        return RedirectResponse("/", 303)
    form = parse_qs((await request.body())[:MAX_FORM_BYTES].decode("utf-8", "replace"))
    if form.get("everywhere") and passes.opens(request.headers.get("cookie", "").encode()):
        passes.void_all()
    answer = RedirectResponse("/login", 303)
    answer.delete_cookie(
        COOKIE, path="/", httponly=True, samesite="strict", secure=request.url.scheme == "https"
    )
    return answer


def _cookie(header: bytes, name: bytes) -> bytes:
    for part in header.split(b";"):
        key, _, value = part.strip().partition(b"=")
        if key == name:
            return value.strip(b'"')
    return b""
