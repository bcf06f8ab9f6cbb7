"""A hook whose environment names another home or vault than the server it reaches still
delivers the event (a hook never loses one) and says so, once, on stderr."""

from __future__ import annotations

from tests.helpers import Server
from tests.hooks.runner import fixture, hook_env, placed, run_hook, session_of, stored


def test_a_hook_of_another_vault_delivers_and_says_so_once(tmp_path, project):
    server = Server(tmp_path / "served").start()
    try:
        mine = tmp_path / "My Vault"
        mine.mkdir()
        payload = placed(fixture("claude-code", "UserPromptSubmit"), project)
        env = hook_env(server.home, server.url, MEMVAULT_VAULT=str(mine))
        result = run_hook("claude-code", payload, env, cwd=project)
        said = result.stderr.decode()
        assert said.count("the event went to the server at") == 1, said
        assert f"vault {(server.home / 'vault').resolve()}" in said and str(mine) in said
        assert len(stored(server.home, session_of(payload))) == 1  # delivered all the same
        # The next event of the same mismatch is delivered too, and not said again.
        again = placed(fixture("claude-code", "PostToolUse"), project)
        repeated = run_hook("claude-code", again, env, cwd=project)
        assert b"the event went to" not in repeated.stderr
        assert len(stored(server.home, session_of(again))) >= 1

        same = placed(fixture("claude-code", "PostToolUse"), project)
        quiet = run_hook("claude-code", same, hook_env(server.home, server.url), cwd=project)
        assert b"the event went to" not in quiet.stderr
        assert len(stored(server.home, session_of(same))) >= 1
    finally:
        server.stop()
