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


@pytest.mark.parametrize(
    "line",
    [
        "I did not change src/app.py.",
        "No changes to src/app.py were needed.",
        "It works without editing src/app.py.",
        "src/app.py doesn't need to be updated.",
        "src/app.py 未修改。",
    ],
)
def test_a_line_that_denies_a_change_reports_none(line):
    assert changed_files(line) == []


@pytest.mark.parametrize(
    "text",
    [
        "已修改 `src/app.py`，加上了重试。",
        r"Rewrote C:\dev\shop\src\app.py" + "\n",
        "- `src/app.py`: fixed the retry loop",
        "Now let me update src/app.py:",
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


def test_a_path_written_from_the_root_is_the_known_path_it_ends_in():
    text = r"Rewrote C:\dev\shop\src\app.py and /home/me/shop/src/db.py"
    assert reported_changes([text], ["src/app.py", "src/db.py", "app.py"]) == [
        "src/app.py",
        "src/db.py",
    ]
