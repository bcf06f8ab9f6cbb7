"""The viewer's door when the server has a secret: the page asks for it once, and a right
answer leaves an HttpOnly, SameSite=Strict cookie that the viewer's pages accept (the API
keeps asking for the bearer header)."""

from __future__ import annotations

import hmac
from urllib.parse import parse_qs

from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse

from memvault.api.guards import VIEWER_COOKIE, viewer_token
from memvault.viewer.render import memory_of, page

router = APIRouter(include_in_schema=False)
COOKIE_DAYS = 30
MAX_FORM_BYTES = 8192


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
    secret = memory_of(request).settings.secret_value()
    body = await request.body()
    form = parse_qs(body[:MAX_FORM_BYTES].decode("utf-8", "replace"))
    given = (form.get("secret") or [""])[0]
    target = _next((form.get("next") or ["/"])[0])
    if secret is None:
        return RedirectResponse(target, status_code=303)
    if not hmac.compare_digest(given.encode(), secret.encode()):
        return page(request, "login.html", title="Secret", next=target, wrong=True, code=401)
    answer = RedirectResponse(target, status_code=303)
    answer.set_cookie(
        VIEWER_COOKIE,
        viewer_token(secret),
        max_age=COOKIE_DAYS * 86400,
        path="/",
        httponly=True,
        samesite="strict",
    )
    return answer


@router.post("/logout")
def leave(request: Request) -> Response:
    answer = RedirectResponse("/login" if memory_of(request).settings.secret_value() else "/", 303)
    answer.delete_cookie(VIEWER_COOKIE, path="/", httponly=True, samesite="strict")
    return answer
