"""A relay driven line by line, as a host's MCP client writes to it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.mcp.clients import RELAY, relay_env

MODERN = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


def modern_meta() -> dict:
    return {"_meta": {VERSION_KEY: MODERN, "io.modelcontextprotocol/clientCapabilities": {}}}


def initialize(request_id: int = 1, version: str = "2025-06-18") -> dict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "tests", "version": "1"},
        },
    }


class LineRelay:
    """``memvault mcp`` with pipes: write a message, read the answer that has its id."""

    def __init__(self, home: Path, command: list[str] | None = None, **settings: str) -> None:
        home.mkdir(parents=True, exist_ok=True)
        self.stderr = (home / "relay-stderr.log").open("wb")
        self.process = subprocess.Popen(
            command or RELAY,
            env=relay_env(home, **settings),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
        )

    def send(self, message: dict | bytes) -> None:
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def ask(self, message: dict) -> dict:
        self.send(message)
        return self.read(message["id"])

    def read(self, request_id: object) -> dict:
        """The next answer with ``request_id``, past any other messages."""
        while True:
            answer = self.next()
            if answer.get("id") == request_id:
                return answer

    def next(self) -> dict:
        """The next message the relay writes."""
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, f"the relay closed stdout; exit status {self.process.poll()}"
        return json.loads(line)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(30)
        self.stderr.close()

    def __enter__(self) -> LineRelay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
