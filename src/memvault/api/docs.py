"""The API docs pages, ``/docs`` (Swagger UI) and ``/redoc``, served with their assets
from the ``fastapi-offline`` package, so they work with no network.

The pages hold no inline script or style: a strict Content-Security-Policy
(``script-src 'self'``) leaves them working. Everything under ``/docs/`` is public, as the
pages are (``guards.PUBLIC_PATHS``).
"""

from __future__ import annotations

import json
from importlib.resources import files

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs/assets"
SWAGGER_INIT = "/docs/swagger-init.js"
OPENAPI_URL = "/openapi.json"

_SWAGGER_OPTIONS = {
    "url": OPENAPI_URL,
    "dom_id": "#swagger-ui",
    "layout": "BaseLayout",
    "deepLinking": True,
    "showExtensions": True,
    "showCommonExtensions": True,
    # Swagger UI would send the document to validator.swagger.io to draw a badge.
    "validatorUrl": None,
}
_SWAGGER_INIT = (
    f"window.ui = SwaggerUIBundle(Object.assign({json.dumps(_SWAGGER_OPTIONS, indent=1)}, "
    "{presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset]}));\n"
)


def _page(title: str, head: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html>\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{title}</title>\n"
        f'<link rel="icon" type="image/png" href="{ASSETS}/favicon.png">\n'
        f"{head}</head>\n<body>\n{body}</body>\n</html>\n"
    )


_SWAGGER_PAGE = _page(
    "memvault API",
    f'<link rel="stylesheet" href="{ASSETS}/swagger-ui.css">\n',
    '<div id="swagger-ui"></div>\n'
    f'<script src="{ASSETS}/swagger-ui-bundle.js"></script>\n'
    f'<script src="{SWAGGER_INIT}"></script>\n',
)
_REDOC_PAGE = _page(
    "memvault API (ReDoc)",
    "",
    f'<redoc spec-url="{OPENAPI_URL}"></redoc>\n'
    f'<script src="{ASSETS}/redoc.standalone.js"></script>\n',
)


def serve_docs(app: FastAPI) -> None:
    """Add the docs pages and their assets to ``app`` (made with ``docs_url=None`` and
    ``redoc_url=None``, so FastAPI's pages, which load from a CDN, are not there)."""
    app.mount(ASSETS, StaticFiles(directory=str(files("fastapi_offline") / "static")), name="docs")

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        return HTMLResponse(_SWAGGER_PAGE)

    @app.get(SWAGGER_INIT, include_in_schema=False)
    async def swagger_init() -> Response:
        return Response(_SWAGGER_INIT, media_type="text/javascript")

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> HTMLResponse:
        return HTMLResponse(_REDOC_PAGE)
