"""The lines of a ``.memvaultignore`` read as gitignore reads them, and the files that
speak for a folder found up to the user's home."""

from __future__ import annotations

import pytest

from memvault.hook.privacy import Rules, ignore_files, named_paths, read


@pytest.mark.parametrize(
    ("line", "path", "private"),
    [
        (".env", ".env", True),
        (".env", "config/.env", True),
        (".env", ".envrc", False),
        ("*.pem", "certs/server.pem", True),
        ("*.pem", "certs/server.pem.txt", False),
        ("secrets/**", "secrets/a/b.txt", True),
        ("secrets/**", "app/secrets/a.txt", False),
        ("/build", "build/out.js", True),
        ("/build", "src/build", False),
        ("logs/", "logs/today.log", True),
        ("**/id_rsa", "home/.ssh/id_rsa", True),
        ("key?.txt", "key1.txt", True),
        ("key[0-9].txt", "keya.txt", False),
    ],
)
def test_a_line_names_the_paths_gitignore_would(line, path, private, tmp_path):
    rules = Rules(str(tmp_path / ".memvaultignore"), [line])
    assert rules.covers(path) is private


def test_a_negation_and_comments_and_paths_outside_the_folder(tmp_path):
    rules = Rules(str(tmp_path / ".memvaultignore"), ["# keys", "*.pem", "!public.pem", ""])
    assert rules.covers("a/private.pem") and not rules.covers("a/public.pem")
    assert not rules.covers(str(tmp_path.parent / "elsewhere.pem"))
    assert Rules(str(tmp_path / ".memvaultignore"), ["# only a comment", "  "]).whole


def test_files_are_found_from_the_folder_up_to_home_and_no_further(tmp_path):
    home = tmp_path / "home"
    project = home / "code" / "app"
    project.mkdir(parents=True)
    (tmp_path / ".memvaultignore").write_text("")  # above home: not read
    (home / ".memvaultignore").write_text("*.pem\n")
    (project / ".memvaultignore").write_text(".env\n")
    found = ignore_files(str(project), {"HOME": str(home)})
    assert [r.file for r in found] == [
        str(project / ".memvaultignore"),
        str(home / ".memvaultignore"),
    ]
    privacy = read(str(project), {"HOME": str(home)})
    assert not privacy.whole
    assert privacy.covers(".env") and privacy.covers("keys/x.pem") and not privacy.covers("a.py")


def test_an_edited_file_is_read_again(tmp_path):
    file = tmp_path / ".memvaultignore"
    file.write_text(".env\n")
    assert not read(str(tmp_path), {"HOME": str(tmp_path)}).whole
    file.write_text("")
    assert read(str(tmp_path), {"HOME": str(tmp_path)}).whole


def test_the_paths_a_tool_call_names():
    data = {
        "tool_input": {
            "command": "cat 'config/.env' > out.txt && ls",
            "edits": [{"file_path": "a.py"}],
        },
        "file_path": "b.py",
    }
    assert {"config/.env", "out.txt", "a.py", "b.py"} <= set(named_paths(data))
