"""Conversations for pipeline tests, as the observe envelopes a host's hooks send."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def conversation(
    session: str,
    steps: list[tuple[str, dict]],
    *,
    project: str = "demo-app",
    cwd: str = "/home/dev/code/demo-app",
    start: datetime = datetime(2026, 11, 30, 9, 0, tzinfo=UTC),
) -> list[dict]:
    """Envelopes for ``(hookType, data)`` steps, a few seconds apart, with stable ids."""
    return [
        {
            "hookType": hook,
            "sessionId": session,
            "project": project,
            "cwd": cwd,
            "timestamp": (start + timedelta(seconds=5 * n)).isoformat().replace("+00:00", "Z"),
            "eventId": f"{session}-{n}",
            "data": data,
        }
        for n, (hook, data) in enumerate(steps)
    ]


def bash(command: str, output: str) -> tuple[str, dict]:
    return "post_tool_use", {
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_output": output,
    }


def bash_failure(command: str, error: str) -> tuple[str, dict]:
    return "post_tool_failure", {
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "error": error,
    }


def edit(path: str, old: str, new: str) -> tuple[str, dict]:
    return "post_tool_use", {
        "tool_name": "Edit",
        "tool_input": {"file_path": path, "old_string": old, "new_string": new},
        "tool_output": f"The file {path} has been updated successfully.",
    }


def read(path: str) -> tuple[str, dict]:
    return "post_tool_use", {
        "tool_name": "Read",
        "tool_input": {"file_path": path},
        "tool_output": "1→#!/usr/bin/env bash",
    }


def prompt(text: str) -> tuple[str, dict]:
    return "prompt_submit", {"prompt": text}


def reply(text: str) -> tuple[str, dict]:
    return "assistant_response", {"assistantResponse": text}


ROOT = "/home/dev/code/demo-app"

# A Chinese session: a CI deploy failure, its cause and fix, a decision, a price look-up,
# and a question left for the user.
CHINESE = [
    ("session_start", {"source": "startup"}),
    prompt("部署脚本在 CI 上一直失败，帮我看看 scripts/deploy.sh 是怎么回事"),
    read(f"{ROOT}/scripts/deploy.sh"),
    bash_failure("bash scripts/deploy.sh", "scripts/deploy.sh: line 12: rsync: command not found"),
    reply(
        "原因是 CI 镜像里没有安装 rsync，脚本第 12 行直接调用了它。"
        "我们决定改用 scp 上传构建产物，而不是在镜像里额外安装 rsync。"
    ),
    edit(f"{ROOT}/scripts/deploy.sh", "rsync -az dist/ $HOST:", "scp -r dist/ $HOST:"),
    bash("bash scripts/deploy.sh", "上传完成，部署成功"),
    reply(
        "已修复：deploy.sh 改用 scp，本地和 CI 上部署都通过了。"
        "下一步：删除 .github/workflows/deploy.yml 里安装 rsync 的步骤。"
    ),
    ("stop", {"last_assistant_message": "已修复：deploy.sh 改用 scp，部署通过。"}),
    prompt("顺便查一下 GitHub Actions 的 Linux runner 现在多少钱一分钟？"),
    (
        "post_tool_use",
        {
            "tool_name": "WebFetch",
            "tool_input": {"url": "https://docs.github.com/en/billing/actions"},
            "tool_output": "Linux 2-core: $0.008 per minute",
        },
    ),
    reply(
        "GitHub Actions 的 Linux 2 核 runner 价格是每分钟 0.008 美元，公开仓库免费。"
        "要不要把 staging 环境也改成 scp？"
    ),
]

# An English session built on the real PostToolUseFailure capture (`npm test`, exit 1):
# the failure, its cause, a decision, the fix, and the passing run.
ENGLISH_FIX = [
    prompt("The login test is failing, can you fix it?"),
    bash_failure("npm test", "Command exited with non-zero status code 1"),
    reply("The test fails because fetchUser returns undefined when the session token has expired."),
    reply("We'll use the refresh-token flow instead of forcing a new login."),
    edit(f"{ROOT}/src/auth.ts", "return undefined", "return refresh(token)"),
    bash("npm test", "Tests: 12 passed, 12 total"),
    reply("Fixed: fetchUser refreshes an expired token first, and npm test passes."),
]

GREETING = [
    ("session_start", {"source": "startup"}),
    prompt("hi"),
    reply("Hello! How can I help you today?"),
    prompt("thanks"),
]

ROUTINE = [
    prompt("list the files in src"),
    bash("ls src", "api.ts\nindex.ts"),
    read(f"{ROOT}/src/api.ts"),
    reply("`src/` contains `api.ts` and `index.ts`."),
]
