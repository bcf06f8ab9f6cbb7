"""Graph extraction from real sessions: precise entities, sensible relations, bounded."""

from __future__ import annotations

import dataclasses

from memvault.derive.entities import LINKS_PER_STEP, MAX_PER_STEP, extract_graph
from memvault.graph.model import SOURCES_LIMIT
from tests.derive.reading import names, relations
from tests.pipeline.sessions import (
    CHINESE,
    ENGLISH_FIX,
    ROOT,
    bash,
    bash_failure,
    edit,
    prompt,
    read,
    reply,
)


def write(path, content):
    return "post_tool_use", {
        "tool_name": "Write",
        "tool_input": {"file_path": path, "content": content},
        "tool_output": "File created successfully",
    }


PYTHON_FIX = [
    prompt("The profile page crashes with a KeyError, fix it"),
    bash_failure(
        "pytest tests/test_users.py",
        "Traceback (most recent call last):\n"
        f'  File "{ROOT}/src/users.py", line 12, in load\n'
        '    return row["email"]\n'
        '  File "/usr/lib/python3/site-packages/db/rows.py", line 40, in __getitem__\n'
        "KeyError: 'email'\n"
        "FAILED tests/test_users.py::test_load - KeyError: 'email'",
    ),
    reply("The root cause is that `load()` reads a column that was renamed to mail."),
    edit(
        f"{ROOT}/src/users.py",
        'def gone():\n    return row["email"]',
        "import os\nimport httpx\nfrom pydantic import BaseModel\nfrom .db import rows\n\n"
        "def load_user(row):\n    return row.get('mail')\n\n"
        "class UserRow(BaseModel):\n    def __init__(self):\n        pass\n",
    ),
    bash("pytest tests/test_users.py", "3 passed"),
]


def test_files_are_named_relative_to_the_session_folder(ingest_steps):
    events, observations = ingest_steps(
        "files", [read(f"{ROOT}/scripts/deploy.sh"), read("/etc/hosts")]
    )
    delta = extract_graph(events, observations)

    assert names(delta, "file") == ["/etc/hosts", "scripts/deploy.sh"]
    (deploy,) = [e for e in delta.of_kind("file") if e.name == "scripts/deploy.sh"]
    assert deploy.sources == [f"obs_{events[0].seq}"]
    assert deploy.first_seen == deploy.last_seen == events[0].occurred_at


def test_an_edit_defines_functions_and_imports_third_party_libraries(ingest_steps):
    delta = extract_graph(*ingest_steps("py", PYTHON_FIX))

    assert names(delta, "function") == ["UserRow", "load", "load_user"]
    assert names(delta, "library") == ["httpx", "pydantic"]  # not os, not the relative .db
    assert relations(delta, "imports") == [
        ("src/users.py", "imports", "httpx"),
        ("src/users.py", "imports", "pydantic"),
    ]
    assert ("load_user", "related_to", "src/users.py") in relations(delta, "related_to")


def test_code_an_edit_removed_is_not_read_as_present(ingest_steps):
    delta = extract_graph(*ingest_steps("removed", PYTHON_FIX))

    assert "gone" not in names(delta, "function")


def test_typescript_symbols_and_package_imports(ingest_steps):
    code = (
        'import { z } from "zod";\n'
        'import fs from "node:fs";\n'
        'import path from "path";\n'
        'import { api } from "./api";\n'
        'import { Devtools } from "@tanstack/react-query-devtools/production";\n'
        "const { chunk } = require('lodash/fp');\n"
        "export async function fetchUser(id: string) {}\n"
        "export const refresh = async (token: string): Promise<void> => {};\n"
        "export class Session {}\n"
    )
    delta = extract_graph(*ingest_steps("ts", [write(f"{ROOT}/src/auth.ts", code)]))

    assert names(delta, "function") == ["Session", "fetchUser", "refresh"]
    assert names(delta, "library") == ["@tanstack/react-query-devtools", "lodash", "zod"]


def test_an_unknown_file_type_yields_no_symbols(ingest_steps):
    delta = extract_graph(
        *ingest_steps("md", [write(f"{ROOT}/notes.md", "def looks_like_code():\n")])
    )

    assert names(delta, "function") == []


def test_package_manager_commands_name_the_libraries_they_install(ingest_steps):
    delta = extract_graph(
        *ingest_steps(
            "install",
            [
                bash("pip install -U 'httpx[http2]>=0.27' -r requirements.txt ./local", "ok"),
                bash("cd web && npm i -D @types/node lodash@4.17.21 ./vendor", "added 2"),
                bash("PIP_NO_CACHE=1 uv add Typing_Extensions", "ok"),
                bash("cargo add serde@1 && go get github.com/spf13/cobra@v1.8.0", "ok"),
                bash_failure("pip install not-a-real-package", "No matching distribution"),
            ],
        )
    )

    assert names(delta, "library") == [
        "@types/node",
        "github.com/spf13/cobra",
        "httpx",
        "lodash",
        "serde",
        "typing-extensions",
    ]


def test_manifest_edits_declare_dependencies(ingest_steps):
    pyproject = 'dependencies = [\n    "fastapi",\n    "rich>=13",\n]\nselect = ["E", "F"]\n'
    package = '  "version": "1.0.0",\n  "react": "^18.2.0",\n  "@vitejs/plugin-react": "~4.2.1",'
    delta = extract_graph(
        *ingest_steps(
            "manifests",
            [
                write(f"{ROOT}/pyproject.toml", pyproject),
                write(f"{ROOT}/package.json", package),
                write(f"{ROOT}/requirements-dev.txt", "# tools\npytest==8.2\n-e .\nruff\n"),
            ],
        )
    )

    assert relations(delta, "depends_on") == [
        ("package.json", "depends_on", "@vitejs/plugin-react"),
        ("package.json", "depends_on", "react"),
        ("pyproject.toml", "depends_on", "fastapi"),
        ("pyproject.toml", "depends_on", "rich"),
        ("requirements-dev.txt", "depends_on", "pytest"),
        ("requirements-dev.txt", "depends_on", "ruff"),
    ]


def test_a_failure_is_an_error_caused_by_the_project_frame_it_points_at(ingest_steps):
    delta = extract_graph(*ingest_steps("trace", PYTHON_FIX))

    assert names(delta, "error") == ["KeyError: 'email'"]
    assert relations(delta, "causes") == [("src/users.py", "causes", "KeyError: 'email'")]
    assert "rows.py" not in " ".join(names(delta, "file"))  # an installed package's frame


def test_a_node_failure_is_caused_by_the_first_frame_of_the_project(ingest_steps):
    stack = (
        "Error: listen EADDRINUSE: address already in use :::3000\n"
        "    at Server.setupListenHandle [as _listen2] (node:net:1817:16)\n"
        f"    at Object.<anonymous> ({ROOT}/src/server.js:10:5)\n"
        f"    at Module._compile ({ROOT}/node_modules/tsx/dist/cjs.js:1:100)\n"
    )
    delta = extract_graph(*ingest_steps("node", [bash_failure("node src/server.js", stack)]))

    assert names(delta, "error") == ["EADDRINUSE: address already in use :::3000"]
    assert relations(delta, "causes") == [
        ("src/server.js", "causes", "EADDRINUSE: address already in use :::3000")
    ]


def test_errors_that_differ_only_in_numbers_are_one_error(ingest_steps):
    delta = extract_graph(
        *ingest_steps(
            "again",
            [
                bash_failure("npm test", "TypeError: expected 3 arguments, got 2"),
                bash_failure("npm test", "TypeError: expected 3 arguments, got 4"),
            ],
        )
    )

    (error,) = delta.of_kind("error")
    assert error.name == "TypeError: expected 3 arguments, got 2"
    assert error.mentions == 2


def test_a_failure_that_names_nothing_adds_no_error(ingest_steps):
    delta = extract_graph(*ingest_steps("vague", ENGLISH_FIX))

    assert names(delta, "error") == []
    assert relations(delta, "fixes") == []


def test_a_change_between_a_failure_and_the_passing_run_fixes_the_error(ingest_steps):
    delta = extract_graph(*ingest_steps("zh", CHINESE))
    decision = "我们决定改用 scp 上传构建产物，而不是在镜像里额外安装 rsync"

    assert names(delta, "error") == ["rsync: command not found"]
    assert relations(delta, "causes") == [
        ("scripts/deploy.sh", "causes", "rsync: command not found")
    ]
    assert relations(delta, "fixes") == [
        ("scripts/deploy.sh", "fixes", "rsync: command not found"),
        (decision, "fixes", "rsync: command not found"),
    ]


def test_a_failure_never_followed_by_a_passing_run_is_not_fixed(ingest_steps):
    delta = extract_graph(*ingest_steps("unfixed", PYTHON_FIX[:4]))

    assert names(delta, "error") == ["KeyError: 'email'"]
    assert relations(delta, "fixes") == []


def test_a_decision_modifies_its_turn_and_uses_the_libraries_it_names(ingest_steps):
    delta = extract_graph(
        *ingest_steps(
            "decide",
            [
                prompt("Profile calls time out under load"),
                reply("We'll use httpx instead of requests for the profile client."),
                edit(f"{ROOT}/src/profile.py", "import requests", "import httpx"),
                prompt("Now update the changelog"),
                edit(f"{ROOT}/CHANGELOG.md", "", "- faster profile calls"),
            ],
        )
    )

    decision = "We'll use httpx instead of requests for the profile client"
    assert names(delta, "decision") == [decision]
    assert relations(delta, "modifies") == [(decision, "modifies", "src/profile.py")]
    assert relations(delta, "uses") == [(decision, "uses", "httpx")]


def test_questions_narration_and_reports_are_not_decisions(ingest_steps):
    delta = extract_graph(
        *ingest_steps(
            "undecided",
            [
                prompt("Should we switch to httpx?"),
                reply("Let me check whether we decided on a client already."),
                reply("Switched to httpx; the tests pass."),
            ],
        )
    )

    assert names(delta, "decision") == []


def test_calls_named_in_prose_are_functions_builtins_are_not(ingest_steps):
    delta = extract_graph(
        *ingest_steps("prose", [reply("`fetchUser()` returns undefined; print() shows the token.")])
    )

    assert names(delta, "function") == ["fetchUser"]


def test_observation_concepts_are_related_to_their_files(ingest_steps):
    events, observations = ingest_steps("concepts", [read(f"{ROOT}/src/auth.ts")])
    upgraded = [dataclasses.replace(o, concepts=["OAuth", "token refresh"]) for o in observations]
    delta = extract_graph(events, upgraded)

    assert names(delta, "concept") == ["OAuth", "token refresh"]
    assert relations(delta, "related_to") == [
        ("OAuth", "related_to", "src/auth.ts"),
        ("src/auth.ts", "related_to", "token refresh"),
    ]


def test_a_refused_tool_call_adds_nothing(ingest_steps):
    refused = (
        "post_tool_failure",
        {
            "tool_name": "Edit",
            "tool_input": {"file_path": f"{ROOT}/src/auth.ts", "new_string": "def f(): pass"},
            "error": "The user doesn't want to proceed with this tool use.",
        },
    )
    delta = extract_graph(*ingest_steps("refused", [refused]))

    assert not delta


def test_one_observation_adds_a_bounded_number_of_entities_and_links(ingest_steps):
    many = [f"{ROOT}/src/module_{n}.py" for n in range(20)]
    step = (
        "post_tool_use",
        {"tool_name": "Edit", "tool_input": {}, "tool_output": "ok", "files": many},
    )
    delta = extract_graph(*ingest_steps("wide", [step]))

    assert len(delta.of_kind("file")) == MAX_PER_STEP
    assert 0 < len(delta.relations) <= LINKS_PER_STEP


def test_an_entity_keeps_every_source_in_order_for_the_store_to_count(ingest_steps):
    events, observations = ingest_steps("often", [read(f"{ROOT}/src/app.py") for _ in range(30)])
    delta = extract_graph(events, observations)

    (app,) = delta.of_kind("file")
    assert app.mentions == 30 > SOURCES_LIMIT
    assert app.sources == [f"obs_{e.seq}" for e in events]


def test_names_that_differ_in_case_are_one_entity(ingest_steps):
    delta = extract_graph(
        *ingest_steps(
            "case",
            [bash("pip install PyYAML", "ok"), write(f"{ROOT}/src/c.py", "import pyyaml\n")],
        )
    )

    (library,) = delta.of_kind("library")
    assert library.key == "pyyaml" and library.mentions == 2


def test_extraction_is_deterministic(ingest_steps):
    session = ingest_steps("same", [*PYTHON_FIX, *CHINESE])

    first, second = extract_graph(*session), extract_graph(*session)
    assert first.entities == second.entities
    assert first.relations == second.relations
