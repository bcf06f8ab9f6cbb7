"""The files a shell command line writes: the common forms, and nothing it cannot be sure of."""

from __future__ import annotations

import pytest

from memvault.derive.shell import written_files


@pytest.mark.parametrize(
    ("command", "files"),
    [
        ("echo hello > note.txt", ["note.txt"]),
        ("echo x >> log/a.txt 2>&1", ["log/a.txt"]),
        ("ls 2> err.txt", ["err.txt"]),
        ("cat a | tee -a out.md", ["out.md"]),
        ("touch a b && mkdir -p src/pkg", ["a", "b", "src/pkg"]),
        ("cp a.txt b.txt", ["b.txt"]),
        ("cp a b c dir/", ["dir/a", "dir/b", "dir/c"]),
        ("mv a.py b.py; git mv old.md new.md", ["b.py", "new.md"]),
        ("sed -i s/a/b/ f.py", ["f.py"]),
        ("sed -i -e s/a/b/ g.py h.py", ["g.py", "h.py"]),
        ("FOO=1 sudo touch /etc/x", ["/etc/x"]),
        ('python -c "print(1)" > out.json', ["out.json"]),
        ("echo 日本語 > メモ.md", ["メモ.md"]),
    ],
)
def test_the_common_forms_name_the_files_they_write(command, files):
    assert written_files(command) == files


@pytest.mark.parametrize(
    "command",
    [
        "npm test > /dev/null",
        "echo $HOME > $OUT",
        "cp *.txt backup/",
        'echo "unterminated',
        "cat < input.txt",
        "grep -r TODO src",
        "git status",
    ],
)
def test_what_it_cannot_be_sure_of_names_no_file(command):
    assert written_files(command) == []
