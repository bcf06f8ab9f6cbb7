import pytest

from memvault.derive.synthetic import NARRATIVE_LIMIT, TITLE_LIMIT, compress, infer_tool_type


@pytest.mark.parametrize(
    ("tool", "kind"),
    [
        ("WebFetch", "web_fetch"),
        ("Grep", "search"),
        ("Glob", "search"),
        ("Bash", "command_run"),
        ("Shell", "command_run"),
        ("Edit", "file_edit"),
        ("MultiEdit", "file_edit"),
        ("StrReplace", "file_edit"),
        ("Write", "file_write"),
        ("Read", "file_read"),
        ("Delete", "file_delete"),
        ("Task", "subagent"),
        ("mcp__github__create_issue", "mcp_call"),
        ("MCP:search", "mcp_call"),
        ("TodoWrite", "planning"),
        ("run_terminal_cmd", "command_run"),
        ("codebase_search", "search"),
        ("read_file", "file_read"),
        ("list_dir", "file_read"),
        ("EditNotebook", "file_edit"),
        # as Cursor, Copilot and Codex name them
        ("search_replace", "file_edit"),
        ("edit_file_v2", "file_edit"),
        ("read_file_v2", "file_read"),
        ("ripgrep_raw_search", "search"),
        ("apply_patch", "file_edit"),
        ("replace_string_in_file", "file_edit"),
        ("insert_edit_into_file", "file_edit"),
        ("create_file", "file_write"),
        ("run_in_terminal", "command_run"),
        ("Frobnicate", "tool"),
        ("Concatenate", "tool"),
    ],
)
def test_tool_names_map_to_observation_types(tool, kind):
    assert infer_tool_type(tool) == kind


def test_a_shell_command_is_titled_by_its_command_with_its_output_in_the_narrative():
    obs = compress(
        "post_tool_use",
        {"tool_name": "Bash", "tool_input": {"command": "npm test"}, "tool_output": "3 failed"},
    )
    assert obs.type == "command_run"
    assert obs.title == "Bash: npm test"
    assert "3 failed" in obs.narrative
    assert "command: npm test" in obs.facts


def test_file_tools_record_their_files():
    obs = compress(
        "post_tool_use",
        {"tool_name": "Edit", "tool_input": {"file_path": "src/app.py", "old_string": "a"}},
    )
    assert obs.type == "file_edit"
    assert obs.files == ["src/app.py"]
    assert obs.title == "Edit: src/app.py"
    assert obs.importance > compress("post_tool_use", {"tool_name": "Read"}).importance


def test_multi_file_edits_record_every_file_once():
    obs = compress(
        "post_tool_use",
        {
            "tool_name": "MultiEdit",
            "tool_input": {
                "edits": [{"file_path": "a.py"}, {"file_path": "b.py"}, {"file_path": "a.py"}]
            },
        },
    )
    assert obs.files == ["a.py", "b.py"]


def test_a_tool_input_sent_as_a_json_string_is_understood():
    obs = compress("post_tool_failure", {"tool_name": "Read", "tool_input": '{"path": "x.md"}'})
    assert obs.files == ["x.md"]


def test_failures_are_errors_with_high_importance():
    obs = compress(
        "post_tool_failure",
        {"tool_name": "Bash", "tool_input": {"command": "make"}, "error": "exit 2"},
    )
    assert obs.type == "error"
    assert obs.title == "Bash failed: exit 2"
    assert obs.importance >= 7


def test_a_cursor_failure_keeps_its_error_message():
    # Cursor's postToolUseFailure sends `error_message`.
    obs = compress(
        "post_tool_failure",
        {"tool_name": "Shell", "tool_input": {"command": "make"}, "error_message": "exit 2"},
    )
    assert obs.title == "Shell failed: exit 2"


def test_prompts_and_responses_are_conversation_with_their_own_titles():
    prompt = compress("prompt_submit", {"prompt": "Fix the login bug"})
    response = compress("assistant_response", {"assistantResponse": "Fixed it in auth.py"})
    assert (prompt.type, prompt.title) == ("conversation", "Prompt: Fix the login bug")
    assert (response.type, response.title) == ("conversation", "Response: Fixed it in auth.py")


def test_subagents_are_first_class_not_fake_tools():
    start = compress("subagent_start", {"agent_id": "a1", "agent_type": "Explore"})
    stop = compress("subagent_stop", {"agent_type": "Explore", "last_message": "found 3 files"})
    assert (start.type, start.title) == ("subagent", "Subagent started: Explore")
    assert (stop.type, stop.title) == ("subagent", "Subagent finished: Explore")
    assert stop.narrative == "found 3 files"


@pytest.mark.parametrize(
    ("hook", "data", "title"),
    [
        ("session_start", {"source": "startup"}, "Session started (startup)"),
        ("session_end", {"reason": "logout"}, "Session ended (logout)"),
        ("stop", {"last_assistant_message": "Done."}, "Turn ended: Done."),
        (
            "notification",
            {"message": "Claude needs your permission"},
            "Notification: Claude needs your permission",
        ),
        ("task_completed", {"task_subject": "Write tests"}, "Task completed: Write tests"),
        ("pre_compact", {"trigger": "manual"}, "Context compaction (manual)"),
        ("some_new_hook", {"x": 1}, "some new hook"),
    ],
)
def test_every_hook_type_gets_a_readable_title(hook, data, title):
    assert compress(hook, data).title == title


def test_titles_and_narratives_are_bounded_and_single_line():
    obs = compress("prompt_submit", {"prompt": "word\n" * 500})
    assert len(obs.title) <= TITLE_LIMIT and "\n" not in obs.title
    assert len(obs.narrative) <= NARRATIVE_LIMIT


def test_non_object_data_does_not_break_compression():
    assert compress("post_tool_use", "just text").type == "tool"
    assert compress("prompt_submit", None).title == "Prompt:"
