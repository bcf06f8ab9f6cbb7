"""Every frontmatter memvault writes reads back as the values it meant, in PyYAML (what
memvault reads with) and in js-yaml and npm ``yaml`` (what Obsidian and its plugins read
with), whatever the text: newlines, separators, YAML's indicators, control characters."""

from __future__ import annotations

import datetime as dt
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memvault.vault import frontmatter, maintain
from memvault.vault.fragments import TAG, tag_name
from memvault.vault.remember import Draft, remember
from tests.vault.yaml_readers import read_with_node

HOSTILE = [
    "line one\nline two",
    "two\n\nparagraphs\n",
    "\r\n",
    "tab\there",
    "\t",
    "key: value",
    "ends with a colon:",
    "text #not a comment",
    "#hash first",
    "- leading dash",
    "-",
    "[bracketed]",
    "{braced}",
    "*star",
    "&anchor",
    "!tag",
    "%percent",
    "@at",
    "`backtick`",
    "? question",
    "| pipe",
    "> folded",
    "<<",
    "=",
    "'single'",
    '"double"',
    "it's",
    'say "hi"',
    "back\\slash and \\n literally",
    "trailing space ",
    " leading space",
    "nel\x85inside",
    "\x85",
    "line\u2028separator",
    "paragraph\u2029separator",
    "lone \x00 nul",
    "bell\x07",
    "escape\x1b[0m",
    "delete\x7f",
    "c1\x9f",
    "\ufeffbyte order mark",
    "no\xa0break",
    "emoji 🎉🧠",
    "日本語のテキスト",
    "中文：冒号 # 注释",
    "true",
    "False",
    "null",
    "~",
    "yes",
    "off",
    "0o17",
    "0x1F",
    "1e3",
    "1_000",
    "12:30",
    ".inf",
    "2026-11-30",
    "2026-11-30T10:00:00Z",
    "",
]
ALPHABET = "ab Z9:#-[]{}*&!%@`'\"\\|>?,\n\r\t\x00\x07\x1b\x7f\x85\x9f\xa0\u2028\u2029\ufeffé日本🎉 "


def _corpus() -> list[str]:
    picked = random.Random(20261130)
    made = ["".join(picked.choices(ALPHABET, k=picked.randint(1, 12))) for _ in range(300)]
    return list(dict.fromkeys(HOSTILE + made))


def _projects(values: list[str]) -> list[str]:
    """Each value as a project of its own (the write path compares projects stripped)."""
    taken: set[str] = set()
    projects = []
    for n, value in enumerate(values):
        project = value if value.strip() and value.strip() not in taken else f"p{n}{value}"
        taken.add(project.strip())
        projects.append(project)
    return projects


def _tag(value: str) -> str | None:
    """``value`` as the tag it is written as, None when it makes no tag."""
    try:
        return tag_name(value)
    except ValueError:
        return None


def _written_fragments(folder, values):
    """For each value: the fragment file the write path made with it in every field, then
    merged into (a second source, a changed summary), and the values meant."""
    meant = []
    for n, (value, project) in enumerate(zip(values, _projects(values), strict=True)):
        first = Draft(
            project=project,
            summary=f"first {value}",
            facts=[f"fact: number {n}"],
            importance=0.25,
            source=value,
            tags=[tag] if (tag := _tag(value)) else [],
            date="2026-11-30",
            properties={
                "note": value,
                "nested": {value: [value, {"deeper": value}], "n": n},
                "listed": [value, [value]],
            },
        )
        own = folder / f"v{n}"  # a folder each: no write scans the others' files
        done = remember(own, first)
        assert done.action == "created"
        second = Draft(
            project=project,
            summary=f"second {value}",
            facts=[f"fact: number {n}"],
            importance=0.5,
            source=f"{value} again",
            date="2026-12-01",
            properties={"added": value},
        )
        # Any fragment of the same project is near enough: this one is merged into.
        assert remember(own, second, threshold=-1.0).path == done.path
        properties = {
            "tags": [TAG, tag] if tag and tag != TAG else [TAG],
            "project": project,
            "date": "2026-12-01",
            "summary": " ".join(f"second {value}".split()),
            "importance": 0.5,
            "source": value,
            "note": value,
            "nested": {value: [value, {"deeper": value}], "n": n},
            "listed": [value, [value]],
            "sources": [value, f"{value} again"] if value else [f"{value} again"],
            "added": value,
        }
        if not value:
            del properties["source"]  # an empty source is no source
        meant.append((done.path, properties))
    return meant


def _written_summaries(folder, values):
    meant = []
    for project in _projects(values):
        candidate = maintain.Candidate(
            path=folder / "x.md",
            project=project,
            summary="what the project knows",
            importance=0.5,
            date="2026-11-30",
            last_used=dt.date(2026, 11, 30),
        )
        assert maintain.write_summary(folder, project, [candidate], dt.date(2026, 11, 30))
        path = maintain.summary_path(folder, project)
        assert maintain.read_summary(folder, project) == "- what the project knows"
        meant.append(
            (
                path,
                {
                    "tags": [maintain.SUMMARY_TAG],
                    "project": project,
                    "date": "2026-11-30",
                    "fragments": 1,
                },
            )
        )
    return meant


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fragments")
    values = _corpus()
    return _written_fragments(folder, values) + _written_summaries(folder, values)


def _yaml_of(path) -> str:
    lines, _ = frontmatter.split(path.read_text(encoding="utf-8"))
    assert lines is not None, path
    return "\n".join(lines)


def test_memvault_reads_back_every_value_it_wrote(written):
    wrong = []
    for path, meant in written:
        got = frontmatter.read(path.read_text(encoding="utf-8"))
        if got != meant:
            wrong.append((path.name, meant, got))
    assert not wrong, wrong[:3]


def test_js_yaml_and_npm_yaml_read_every_frontmatter_as_memvault_meant_it(written):
    answers = read_with_node([_yaml_of(path) for path, _ in written])
    wrong = []
    for (path, meant), answer in zip(written, answers, strict=True):
        for reader, read in answer.items():
            if read != {"value": meant}:
                wrong.append((reader, _yaml_of(path), meant, read))
    assert not wrong, f"{len(wrong)} misread, for example: {wrong[:3]}"


def _collections(children):
    mappings = st.dictionaries(st.text(max_size=5), children, max_size=3)
    return st.lists(children, max_size=3) | mappings


NAME_ALPHABET = "aZé日_-. 09:#'\"[]{}!&*?|>%@`\t\n\x85\u2028"


def _names() -> list[str]:
    picked = random.Random(20261201)
    made = ["".join(picked.choices(NAME_ALPHABET, k=picked.randint(1, 8))) for _ in range(2000)]
    fixed = ["note", "created at", "dg-publish", "状态", "_id", "v1.2", "a-b_c.d", "yes", "1e3"]
    return list(dict.fromkeys(fixed + made))


def test_every_property_name_memvault_accepts_is_read_as_that_name_by_every_reader():
    accepted = [name for name in _names() if frontmatter.key_problem(name) is None]
    refused = [name for name in _names() if frontmatter.key_problem(name) is not None]
    assert len(accepted) > 20 and "yes" in refused and "1e3" in refused
    document = "\n".join(frontmatter.render_property(name, n) for n, name in enumerate(accepted))
    meant = {name: n for n, name in enumerate(accepted)}
    assert frontmatter.read(f"---\n{document}\n---\n") == meant
    (answer,) = read_with_node([document])
    assert answer == {"js-yaml": {"value": meant}, "yaml": {"value": meant}}


def test_a_name_memvault_refuses_is_never_written():
    for name in _names():
        if frontmatter.key_problem(name) is not None:
            with pytest.raises(frontmatter.FrontmatterError):
                frontmatter.render_property(name, 1)


@settings(max_examples=300, deadline=None)
@given(value=st.text(), nested=st.recursive(st.text(), _collections, max_leaves=6))
def test_any_text_or_nesting_written_as_a_property_reads_back_the_same(value, nested):
    text = frontmatter.with_properties("body\n", {"v": value, "l": [value], "n": nested})
    assert frontmatter.read(text) == {"v": value, "l": [value], "n": nested}
    assert frontmatter.split(text)[1] == "body\n"
