"""Reading a fragment parses each text once: a write compares the draft with every
fragment of its project, and a change made to a file since, by memvault or by a person in
Obsidian, is always what the next read sees."""

from __future__ import annotations

import os

from memvault.vault import frontmatter
from memvault.vault.fragments import Fragment, live_fragment_files
from memvault.vault.remember import Draft, remember

TOPICS = [
    "pgbouncer pools the connections",
    "the loaders are named fetchX",
    "vite serves the viewer in development",
    "ruff formats the code",
    "alembic is not used for migrations",
    "the board lists sessions by their last event",
    "hooks spool to disk when the server is down",
    "the index wakes after a rewrite",
    "Chinese text is split into character pairs",
    "a snapshot keeps its person's lines",
    "fragments are merged above 0.8 similarity",
    "postgres replicas share one memory",
]


def _draft(topic: str) -> Draft:
    return Draft(
        project="demo-app",
        summary=f"We decided that {topic}.",
        facts=[f"decision: {topic}"],
        date="2026-11-30",
    )


def _count_parses(monkeypatch) -> list[int]:
    parses = [0]
    parse = frontmatter.read

    def counted(text):
        parses[0] += 1
        return parse(text)

    monkeypatch.setattr(frontmatter, "read", counted)
    return parses


def test_a_write_does_not_parse_again_the_fragments_it_read_before(tmp_path, monkeypatch):
    for topic in TOPICS[:-1]:
        remember(tmp_path, _draft(topic))
    remember(tmp_path, _draft("a first read of every fragment"))  # each one read is kept
    parses = _count_parses(monkeypatch)
    result = remember(tmp_path, _draft(TOPICS[-1]))
    assert result.action == "created"
    # The one written by the write before (never read since), and the new file read back
    # to verify it: not the other eleven again.
    assert parses[0] <= 2, parses[0]


def test_a_persons_edit_of_the_same_size_is_read(tmp_path):
    path = remember(tmp_path, _draft(TOPICS[0])).path
    assert Fragment.read(path).summary == f"We decided that {TOPICS[0]}."
    text = path.read_text(encoding="utf-8")
    edited = text.replace("pgbouncer", "PGBOUNCER")
    assert len(edited) == len(text)
    with path.open("r+", encoding="utf-8", newline="") as handle:  # in place, one inode
        handle.write(edited)
    assert Fragment.read(path).summary == "We decided that PGBOUNCER pools the connections."
    assert Fragment.read(path).summary == "We decided that PGBOUNCER pools the connections."


def test_an_edit_that_keeps_the_modification_time_is_read(tmp_path):
    path = remember(tmp_path, _draft(TOPICS[1])).path
    text = path.read_text(encoding="utf-8")
    before = os.stat(path)
    Fragment.read(path)
    # A sync tool or `cp -p` writes the same size and sets the old modification time back.
    path.write_text(text.replace("fetchX", "loadsX"), encoding="utf-8", newline="")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_size == before.st_size
    assert Fragment.read(path).summary == "We decided that the loaders are named loadsX."


def test_a_readers_change_to_the_properties_is_its_own(tmp_path):
    path = remember(tmp_path, _draft(TOPICS[2])).path
    first = Fragment.read(path)
    first.properties["tags"].append("mine")
    first.properties["summary"] = "changed"
    again = Fragment.read(path)
    assert again.properties["tags"] == ["agent-memory"]
    assert again.summary == f"We decided that {TOPICS[2]}."


def test_a_file_that_does_not_parse_is_read_again_each_time(tmp_path):
    path = tmp_path / "demo-app - 2026-11-30 - broken.md"
    path.write_text("---\nsummary: [unclosed\n---\n- a fact\n", encoding="utf-8")
    for _ in range(2):
        try:
            Fragment.read(path)
        except frontmatter.FrontmatterError:
            pass
        else:
            raise AssertionError("a broken frontmatter read as a fragment")
    path.write_text("---\nsummary: mended\n---\n- a fact\n", encoding="utf-8")
    assert Fragment.read(path).summary == "mended"


def test_the_live_fragments_listed_are_the_files_a_person_keeps_there(tmp_path):
    vault = tmp_path / "vault"
    folder, notes, outside = vault / "fragments", vault / "notes", tmp_path / "elsewhere"
    for place in ("sub", ".obsidian", "_archive", "_projects"):
        (folder / place).mkdir(parents=True)
    notes.mkdir()
    outside.mkdir()
    for name in ("a.md", "sub/b.md", ".obsidian/c.md", "_archive/d.md", "_projects/e.md"):
        (folder / name).write_text("- a fact\n", encoding="utf-8")
    (folder / ".hidden.md").write_text("- a fact\n", encoding="utf-8")
    (folder / "f.txt").write_text("- a fact\n", encoding="utf-8")
    (notes / "g.md").write_text("- a fact\n", encoding="utf-8")
    (outside / "h.md").write_text("- a fact\n", encoding="utf-8")
    os.symlink(notes / "g.md", folder / "g.md")  # a link within the vault is followed
    os.symlink(outside / "h.md", folder / "h.md")  # a link out of it is not
    os.symlink(notes, folder / "linked")  # nor is a link to a folder
    listed = [path.relative_to(folder).as_posix() for path in live_fragment_files(folder)]
    assert listed == ["a.md", "g.md", "sub/b.md"]


def test_a_loop_of_links_is_passed_over_and_writes_go_on(tmp_path):
    vault = tmp_path / "vault"
    folder = vault / "fragments"
    folder.mkdir(parents=True)
    os.symlink(folder / "b.md", folder / "a.md")
    os.symlink(folder / "a.md", folder / "b.md")
    assert live_fragment_files(folder) == []
    assert remember(folder, _draft(TOPICS[3])).action == "created"
    assert [path.name for path in live_fragment_files(folder)] == [
        "demo-app - 2026-11-30 - We decided that ruff formats the code.md"
    ]
