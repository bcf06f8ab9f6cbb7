"""The web viewer memvault's server serves at ``/``: the board, sessions and their
timelines, search with its drill-down, fragments (and those whose files are gone), the tokens
memory costs, health, and live updates. One module per
page; pages are rendered on the server with autoescape, so they work without script, and
the one small script (``static/viewer.js``) only reloads a page when the server says it
changed. Nothing is fetched from anywhere else."""

from __future__ import annotations

from importlib.resources import files

from fastapi import Depends, FastAPI
from fastapi.staticfiles import StaticFiles

from memvault.viewer import board, cost, fragments, health, live, login, search, sessions

# The paths the viewer answers: the secret's cookie is accepted on these alone.
PAGES = (
    "/",
    "/board",
    "/sessions",
    "/search",
    "/memory",
    "/fragments",
    "/cost",
    "/health",
    "/live",
)
# Open to anyone: the door that asks for the secret, and the files its page needs.
OPEN = ("/login", "/logout", "/static")
LOGIN = "/login"
FEEDS = ("/live",)  # read by script: a 401 without the cookie, not the door


def mount(app: FastAPI) -> None:
    for module in (board, sessions, search, fragments, cost, health):
        app.include_router(module.router, dependencies=[Depends(live.mark_seen)])
    for module in (live, login):
        app.include_router(module.router)
    app.mount("/static", StaticFiles(directory=str(files("memvault.viewer") / "static")), "static")
