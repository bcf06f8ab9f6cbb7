"""Private projects and paths, as hosts run the hook: a ``.memvaultignore`` read by the hook
itself, ``MEMVAULT_CAPTURE=off``, and what ``memvault private`` and the health report say."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx

from memvault.config import Settings
from memvault.doctor import OK, WARN
from memvault.doctor.privacy import check_privacy
from memvault.hook.privacy import MARKER, note_project
from tests.hooks.runner import answer, fixture, hook_env, placed, run_hook, session_of, stored

SECRET = "hunter2-do-not-keep"


def claude_prompt(project, session=None):
    return placed(fixture("claude-code", "UserPromptSubmit"), project, session)


def cursor_prompt(project, session=None):
    return placed(fixture("cursor", "beforeSubmitPrompt"), project, session)


def claude_read(project, path, session=None):
    payload = placed(fixture("claude-code", "PostToolUse"), project, session)
    payload.update(
        tool_name="Read",
        tool_input={"file_path": str(path)},
        tool_response={"content": f"TOKEN={SECRET}"},
        tool_use_id=f"toolu_{abs(hash(str(path)))}",
    )
    return payload


def test_an_empty_ignore_file_keeps_a_claude_code_project_out_and_says_so_once(server, project):
    (project / ".memvaultignore").write_text("")
    env = hook_env(server.home, server.url)
    first = run_hook("claude-code", claude_prompt(project), env)
    payload = claude_prompt(project, session_of(claude_prompt(project)))
    session = session_of(payload)
    runs = [run_hook("claude-code", payload, env) for _ in range(2)]
    assert answer(first) is None  # nothing injected
    assert b"makes the project private" in first.stderr
    assert b"makes the project private" in runs[0].stderr  # a new session is told once
    assert runs[1].stderr == b""  # and only once
    assert all(answer(r) is None for r in runs)
    assert stored(server.home, session) == []
    assert not (server.home / "spool").exists() or not list((server.home / "spool").iterdir())


def test_an_ignore_file_above_the_project_makes_a_cursor_project_private(server, project):
    (project.parent / ".memvaultignore").write_text("# client work\n\n")
    nested = project / "packages" / "web"
    nested.mkdir(parents=True)
    payload = cursor_prompt(nested)
    result = run_hook("cursor", payload, hook_env(server.home, server.url))
    assert answer(result) == {"continue": True}  # the prompt goes on, with no memory
    assert b"makes the project private" in result.stderr
    assert stored(server.home, session_of(payload)) == []


def test_capture_off_in_the_environment_records_nothing_for_the_session(server, project):
    payload = claude_prompt(project)
    env = hook_env(server.home, server.url, MEMVAULT_CAPTURE="off")
    first, second = (run_hook("claude-code", payload, env) for _ in range(2))
    assert b"MEMVAULT_CAPTURE=off" in first.stderr and second.stderr == b""
    assert answer(first) is None
    assert stored(server.home, session_of(payload)) == []


def test_a_read_of_a_private_path_is_kept_with_its_content_replaced(server, project):
    (project / ".memvaultignore").write_text(".env\nsecrets/**\n*.pem\n!public.pem\n")
    session = f"s-{project.name}-paths"
    env = hook_env(server.home, server.url)
    reads = [
        project / ".env",
        project / "secrets" / "deploy" / "key.txt",
        project / "certs" / "server.pem",
        project / "certs" / "public.pem",
        project / "src" / "app.py",
    ]
    for path in reads:
        run_hook("claude-code", claude_read(project, path, session), env)
    events = stored(server.home, session)
    raws = [json.dumps(event.payload) for event in events]
    assert len(events) == 5
    private = [raw for raw in raws if MARKER in raw]
    assert len(private) == 3
    assert all(SECRET not in raw and ".memvaultignore" in raw for raw in private)
    by_file = {
        e.payload["tool_input"]["file_path"]: raw
        for e, raw in zip(events, raws, strict=True)
        if MARKER not in raw
    }
    assert SECRET in by_file[str(project / "certs" / "public.pem")]
    assert SECRET in by_file[str(project / "src" / "app.py")]


def test_cursor_shell_and_file_reads_of_private_paths_are_replaced(server, project):
    (project / ".memvaultignore").write_text(".env\n")
    session = f"s-{project.name}-cursor"
    env = hook_env(server.home, server.url)
    shell = placed(fixture("cursor", "afterShellExecution"), project, session)
    shell.update(command="cat .env", output=f"TOKEN={SECRET}")
    read = placed(fixture("cursor", "beforeReadFile"), project, session)
    read.update(file_path=str(project / "config" / ".env"), content=f"TOKEN={SECRET}")
    for payload in (shell, read):
        run_hook("cursor", payload, env)
    events = stored(server.home, session)
    assert len(events) == 2
    for event in events:
        assert event.payload["tool_input"] == MARKER
        assert SECRET not in json.dumps(event.payload)


def test_status_and_the_private_command_show_and_change_a_private_project(server, project):
    env = hook_env(server.home, server.url, COLUMNS="200")  # a path stays on one line
    run = [sys.executable, "-m", "memvault.cli", "private"]
    made = subprocess.run([*run, "on", str(project)], env=env, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    assert (project / ".memvaultignore").is_file()
    result = run_hook("claude-code", claude_prompt(project), env)
    assert b"makes the project private" in result.stderr
    health = httpx.get(f"{server.url}/agentmemory/health").json()
    assert str(project) in health["privacy"]["privateProjects"]
    status = subprocess.run(
        [sys.executable, "-m", "memvault.cli", "status"], env=env, capture_output=True, text=True
    )
    assert "private project" in status.stdout and project.name in status.stdout
    assert str(project) in httpx.get(f"{server.url}/health").text  # the viewer's page
    undone = subprocess.run([*run, "off", str(project)], env=env, capture_output=True, text=True)
    assert undone.returncode == 0, undone.stderr
    assert not (project / ".memvaultignore").exists()
    health = httpx.get(f"{server.url}/agentmemory/health").json()
    assert str(project) not in health["privacy"]["privateProjects"]
    payload = claude_prompt(project)
    run_hook("claude-code", payload, env)
    assert len(stored(server.home, session_of(payload))) == 1


def test_the_private_command_leaves_a_file_of_private_paths_alone(server, project):
    (project / ".memvaultignore").write_text(".env\n")
    env = hook_env(server.home, server.url)
    for state in ("on", "off"):
        result = subprocess.run(
            [sys.executable, "-m", "memvault.cli", "private", state, str(project)],
            env=env,
            capture_output=True,
            text=True,
        )
        assert result.returncode == 1
        assert "lists private paths" in result.stderr
    assert (project / ".memvaultignore").read_text() == ".env\n"


def test_doctor_names_private_projects_and_warns_of_capture_off(project, tmp_path):
    settings = Settings(home=tmp_path / "home")
    (project / ".memvaultignore").write_text("")
    note_project(str(settings.home), str(project))
    found = check_privacy(settings, project, {"HOME": str(tmp_path)})
    assert found.level == OK and "makes the project private" in found.finding
    assert str(project) in found.finding
    off = check_privacy(settings, tmp_path, {"HOME": str(tmp_path), "MEMVAULT_CAPTURE": "off"})
    assert off.level == WARN and "MEMVAULT_CAPTURE" in (off.fix or "")
