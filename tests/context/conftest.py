from __future__ import annotations

import pytest

from memvault.vault.remember import Draft

TOKENS = Draft(
    project="demo-app",
    summary="Login issues a short-lived access token and a refresh token",
    facts=["access token: JWT, 15 min", "refresh token: 30 days, rotated on use"],
    description="login tokens",
)
HASHING = Draft(
    project="demo-app",
    summary="Passwords are hashed with argon2id",
    facts=["algorithm: argon2id", "old bcrypt hashes upgraded at next login"],
    description="password hashing",
)


@pytest.fixture
def auth_memory(memory):
    """A memory of a project about its login, with two fragments."""
    memory.remember(TOKENS)
    memory.remember(HASHING)
    return memory


def start(memory, session_id: str) -> str:
    """A host session started as a hook starts it; the block it was given."""
    return memory.context.start_session(
        {
            "sessionId": session_id,
            "project": "demo-app",
            "cwd": "/home/dev/demo-app",
            "agentId": "claude-code",
        }
    ).context
