"""JSON responses encoded with memvault's fast encoder (bulk answers carry 500 results)."""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse as _StarletteJSON

from memvault import jsontext


class JSONResponse(_StarletteJSON):
    def render(self, content: Any) -> bytes:
        return jsontext.dumps(content).encode()
