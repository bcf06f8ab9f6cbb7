"""The files an agent's reply reports changing, read where a history kept no edits."""

from __future__ import annotations

import pytest

from memvault.derive.reported import changed_files, reported_changes, written_files

REPORT = """Perfect! I've addressed the security issue with `Path.GetTempFileName()` by:

## **Summary of Changes**

### **1. Created SecureTempFileHelper.cs**
- **Location**: `Blast.Core/Services/SecureTempFileHelper.cs`
- **Collision Handling**: retries with new random names

### **2. Updated Core Services**
- **FileDiffer.cs**: Replaced 2 instances of `Path.GetTempFileName()`
- **BlockMerger.cs**: Replaced 2 instances

I looked at ReadMe.md for the conventions.
"""
READS = ["Blast.Core/Services/FileDiffer.cs", "Blast.Core/Services/BlockMerger.cs"]


def test_a_report_gives_each_file_by_the_path_the_turn_knows_it_by():
    assert reported_changes([REPORT], READS) == [
        "Blast.Core/Services/SecureTempFileHelper.cs",
        "Blast.Core/Services/FileDiffer.cs",
        "Blast.Core/Services/BlockMerger.cs",
    ]


def test_a_file_only_read_or_mentioned_is_not_changed():
    """ReadMe.md is named without a change; a call is not a file."""
    assert "ReadMe.md" not in changed_files(REPORT)
    assert all("GetTempFileName" not in name for name in written_files(REPORT))


def test_a_bare_name_no_path_of_the_turn_ends_in_is_left_out():
    """A fragment's files are checked against the project's folder: a name alone would be
    looked for at its root and found gone."""
    assert reported_changes(["Updated FileDiffer.cs to retry."], []) == []
    assert reported_changes(["Updated FileDiffer.cs to retry."], ["src/FileDiffer.cs"]) == [
        "src/FileDiffer.cs"
    ]


def test_a_name_two_folders_hold_is_left_out_and_one_path_written_twice_is_one():
    known = ["src/a/store.ts", "src/b/store.ts"]
    assert reported_changes(["Fixed store.ts."], known) == []
    assert reported_changes(["Fixed src/a/store.ts."], known) == ["src/a/store.ts"]
    assert reported_changes(["Fixed app.py."], ["app.py", "src/app.py"]) == ["app.py"]
    assert reported_changes(["Fixed Services/X.cs."], ["Core/Services/X.cs"]) == [
        "Core/Services/X.cs"
    ]


def test_a_folder_named_like_a_file_is_no_changed_file():
    """A project folder with a dot in its name ("BlastMerge.Core") reads like a file: one
    the turn knows a path in, by its tools or its replies, is not a file it changed."""
    listed = ["BlastMerge.Core", "BlastMerge.Core/FileDiffer.cs"]
    report = "Updated BlastMerge.Core and BlastMerge.Core/FileDiffer.cs."
    assert reported_changes([report], listed) == ["BlastMerge.Core/FileDiffer.cs"]
    written = "Updated `Shop.Api`, see Shop.Api/Startup.cs and src/Shop.Api/x.cs."
    assert reported_changes([written], ["Shop.Api"]) == []
    assert reported_changes(["Updated Shop.Api."], ["Shop.Api"]) == ["Shop.Api"]
    # The folder's paths written from the root, or deeper, make it no file either.
    for inside in ("C:\\dev\\shop\\BlastMerge.Core\\x.cs", "src/BlastMerge.Core/x.cs"):
        assert reported_changes(["Updated BlastMerge.Core."], ["BlastMerge.Core", inside]) == []
    # A file whose name starts a folder's is still a file.
    assert reported_changes(["Updated src/a.py."], ["src/a.py", "src/a.py.d/x.py"]) == ["src/a.py"]
    # A folder named like a file leaves the one file of that name unambiguous.
    settings = ["a/settings.json", "b/settings.json", "b/settings.json/local.json"]
    assert reported_changes(["Updated settings.json."], settings) == ["a/settings.json"]


@pytest.mark.parametrize(
    "line",
    [
        "I did not change src/app.py.",
        "No changes to src/app.py were needed.",
        "It works without editing src/app.py.",
        "src/app.py doesn't need to be updated.",
        "src/app.py 未修改。",
        "src/app.py needed nothing.",
        "src/app.py should be updated as well.",
        "Now let me update src/app.py:",
        "You could add a retry to src/app.py.",
        "Would you like me to also update src/app.py?",
        "Shall I keep src/app.py as it was, or is it fixed?",
        "## Next steps\n- src/app.py",
        "需要修改 src/app.py",
    ],
)
def test_a_clause_that_denies_foresees_offers_or_asks_a_change_reports_none(line):
    assert changed_files(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "Fixed src/app.py so it doesn't crash.",
        "Updated `src/app.py` so that no retries happen on 4xx.",
        "Fixed the 'not found' error in src/app.py.",
        "修复了 src/app.py 中未处理的异常",
    ],
)
def test_a_negation_about_something_else_leaves_the_report(line):
    assert changed_files(line) == ["src/app.py"]


@pytest.mark.parametrize(
    "line",
    [
        "The timeout was added in `src/app.py` last month when the retry loop was refactored.",
        "Git log shows `src/app.py` was modified 3 days ago by Alice.",
        "If you updated `src/app.py`, restart the server.",
        "You asked whether `src/app.py` was changed.",
        "The bug was introduced when `src/app.py` was refactored in #123.",
        "I can see you've updated src/app.py nicely.",
        "src/app.py was originally written for Python 2.",
        "如果修改了 src/app.py，需要重启服务",
        "你已经修改了 src/app.py",
    ],
)
def test_a_change_told_of_history_a_condition_or_the_users_is_no_report(line):
    # A session that only reads (a live one, before its first edit) tells of such changes.
    assert changed_files(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "Fixed src/app.py so it doesn't crash when the list is empty.",
        "Updated src/app.py: it now retries if the server answers 503.",
        "The file src/app.py has been updated to use the new API.",
    ],
)
def test_a_condition_after_the_change_leaves_the_report(line):
    assert changed_files(line) == ["src/app.py"]


def test_a_denial_holds_for_its_own_clause_only():
    assert changed_files("Updated src/auth.ts, left src/api.ts untouched.") == ["src/auth.ts"]
    assert changed_files("已修改 `src/auth.ts`。`src/api.ts` 无需修改。") == ["src/auth.ts"]


def test_a_list_counts_under_the_heading_that_reports_it_and_no_further():
    text = "### Updated services\n- `src/a.py`\n- src/b.py\n\nSee src/c.py for the rest."
    assert changed_files(text) == ["src/a.py", "src/b.py"]
    assert changed_files("## Files read\n- src/a.py") == []


def test_a_path_with_a_space_or_glued_to_chinese_is_not_cut_into_another():
    assert written_files("Updated `src/My Folder/app.py` and `src/b.py`") == ["src/b.py"]
    assert written_files("修改了src/app.py，完成") == ["src/app.py"]


@pytest.mark.parametrize(
    "text",
    [
        "已修改 `src/app.py`，加上了重试。",
        r"Rewrote C:\dev\shop\src\app.py" + "\n",
        "- `src/app.py`: fixed the retry loop",
        "修改了src/app.py，加上了重试",
        "## Files modified\n\n- `src/app.py`\n",
        "**Changed files:**\n1. ./src/app.py",
    ],
)
def test_a_change_is_read_in_chinese_in_windows_paths_and_in_list_items(text):
    assert [f.rsplit("/", 1)[-1] for f in changed_files(text)] == ["app.py"]


def test_what_a_code_block_shows_is_not_reported():
    text = "Here is how:\n```bash\nsed -i 's/a/b/' src/app.py  # updated\n```\nDone."
    assert changed_files(text) == []


def test_a_url_a_version_and_an_absolute_path_are_no_files_the_turn_knows():
    text = "Updated https://example.com/docs/page.html, bumped to 1.2.3, edited /etc/hosts.conf"
    assert reported_changes([text], []) == []


def test_a_path_the_tools_named_wins_over_one_written_deeper_elsewhere():
    """A reply may write a path from another root (a link, "was shop/src/app.py"): the
    path the turn's tools used is the one the project's folder holds."""
    replies = [
        "Updated app.py; see github.com/acme/shop/blob/main/src/app.py (was shop/src/app.py)"
    ]
    assert reported_changes(replies, ["src/app.py"]) == ["src/app.py"]
    assert reported_changes(["Fixed Core/Services/X.cs"], ["Services/X.cs"]) == ["Services/X.cs"]


def test_a_path_outside_the_project_is_never_kept():
    assert reported_changes(["Updated ../other/app.py"], ["../other/app.py"]) == []


def test_a_path_written_from_the_root_is_the_known_path_it_ends_in():
    text = r"Rewrote C:\dev\shop\src\app.py and /home/me/shop/src/db.py"
    assert reported_changes([text], ["src/app.py", "src/db.py", "app.py"]) == [
        "src/app.py",
        "src/db.py",
    ]
