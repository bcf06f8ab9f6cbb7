"""Writing fragments: create, or merge into the project's near-duplicate, never lose one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from memvault import Memory
from memvault.errors import InvalidInput
from memvault.vault import frontmatter
from memvault.vault.fragments import check_folder
from memvault.vault.likeness import likeness
from memvault.vault.remember import Draft, remember


def draft(**changes):
    base = Draft(
        project="demo-app",
        summary="Data loaders are named fetchX.",
        facts=["rule: loaders are named fetchX, not getX", "why: one verb for every read"],
        importance=0.6,
        source="session-1",
        tags=["api"],
        date="2026-11-30",
    )
    for key, value in changes.items():
        setattr(base, key, value)
    return base


def test_a_new_fragment_follows_every_rule(tmp_path):
    result = remember(tmp_path, draft())
    assert result.action == "created"
    assert result.path.name == "demo-app - 2026-11-30 - Data loaders are named fetchX.md"
    props = frontmatter.read(result.path.read_text(encoding="utf-8"))
    assert props["tags"] == ["agent-memory", "api"] and props["date"] == "2026-11-30"
    assert props["importance"] == 0.6 and props["source"] == "session-1"
    assert check_folder(tmp_path).problems == []


def test_similarity_just_above_the_threshold_merges_just_below_creates(tmp_path):
    other = draft(facts=["rule: loaders are named fetchX, not getX", "scope: src/api only"])
    score = likeness(draft().summary, draft().facts, other.summary, other.facts)
    assert 0.5 < score < 1
    below, above = tmp_path / "below", tmp_path / "above"
    for folder in (below, above):
        folder.mkdir()
        remember(folder, draft())
    created = remember(below, other, threshold=score + 0.01)
    assert created.action == "created" and len(list(below.glob("*.md"))) == 2
    merged = remember(above, other, threshold=score - 0.01)
    assert merged.action == "merged" and len(list(above.glob("*.md"))) == 1
    assert merged.similarity == pytest.approx(score)


def test_a_merge_unites_facts_and_tags_keeps_sources_and_raises_importance(tmp_path):
    first = remember(tmp_path, draft())
    path = first.path
    text = path.read_text(encoding="utf-8").replace(
        "project: demo-app", "project: demo-app   # set by hand\nreviewed: true"
    )
    path.write_text(text, encoding="utf-8")
    remember(
        tmp_path,
        draft(
            facts=["rule: loaders are named fetchX, not getX", "scope: src/api"],
            importance=0.9,
            source="session-2",
            tags=["naming"],
            date="2026-12-01",
        ),
    )
    after = path.read_text(encoding="utf-8")
    props = frontmatter.read(after)
    assert props["importance"] == 0.9 and props["date"] == "2026-12-01"
    assert props["tags"] == ["agent-memory", "api", "naming"]
    assert props["source"] == "session-1" and props["sources"] == ["session-1", "session-2"]
    assert "project: demo-app   # set by hand\nreviewed: true" in after
    assert after.count("- rule: loaders are named fetchX, not getX") == 1
    assert "- why: one verb for every read" in after and "- scope: src/api" in after
    assert len(list(tmp_path.glob("*.md"))) == 1


def test_a_lower_importance_never_lowers_the_stored_one(tmp_path):
    first = remember(tmp_path, draft(importance=0.9))
    remember(tmp_path, draft(importance=0.1))
    assert frontmatter.read(first.path.read_text(encoding="utf-8"))["importance"] == 0.9


def test_a_fragment_with_no_confidence_keeps_none_when_a_surer_or_looser_one_merges(tmp_path):
    """No confidence is a person's word, held as sure as can be: an agent's passing
    statement merged in (0.7) does not make it one to tell only with its session."""
    first = remember(tmp_path, draft(source=None))
    remember(tmp_path, draft(confidence=0.7, source="session s1"))
    props = frontmatter.read(first.path.read_text(encoding="utf-8"))
    assert "confidence" not in props and props["sources"] == ["session s1"]


def test_another_projects_fragment_and_the_archive_are_never_merged_into(tmp_path):
    remember(tmp_path, draft(project="other-app"))
    archived = tmp_path / "_archive"
    archived.mkdir()
    (archived / "x.md").write_text(
        (tmp_path / "other-app - 2026-11-30 - Data loaders are named fetchX.md")
        .read_text(encoding="utf-8")
        .replace("other-app", "demo-app"),
        encoding="utf-8",
    )
    assert remember(tmp_path, draft()).action == "created"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"properties": {"type": "decision"}}, "`type` is not used"),
        ({"properties": {"related_fragments": ["a"]}}, "`related_fragments` is not used"),
        ({"facts": ["see [[Other]]"]}, "without [[wikilinks]]"),
        ({"importance": 1.5}, "importance must be from 0 to 1"),
        ({"summary": " "}, "summary is required"),
        ({"facts": []}, "at least one fact"),
        ({"date": "yesterday"}, "date must be YYYY-MM-DD"),
    ],
)
def test_a_fragment_that_breaks_a_rule_is_refused_and_nothing_written(tmp_path, changes, message):
    with Memory.open(home=tmp_path / "home") as memory:
        with pytest.raises(InvalidInput, match=message.replace("[", r"\[")):
            memory.remember(draft(**changes))
        assert not memory.settings.fragments_path.exists() or not list(
            memory.settings.fragments_path.glob("*.md")
        )


def test_concurrent_writers_lose_no_fact(tmp_path):
    remember(tmp_path, draft())
    barrier = threading.Barrier(8)
    failures = []

    def writer(n):
        barrier.wait()
        for i in range(5):
            try:
                remember(tmp_path, draft(facts=[*draft().facts, f"note: writer {n} fact {i}"]))
            except Exception as exc:  # pragma: no cover - reported below
                failures.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    # As the fragment grows, later drafts may fall under the threshold and start a new
    # fragment; what matters is that every fact landed, exactly once.
    text = "".join(p.read_text(encoding="utf-8") for p in tmp_path.glob("*.md"))
    for n in range(8):
        for i in range(5):
            assert text.count(f"- note: writer {n} fact {i}\n") == 1


def test_the_save_command(tmp_path):
    env = {**os.environ, "MEMVAULT_HOME": str(tmp_path)}

    def save(*args):
        return subprocess.run(
            [sys.executable, "-m", "memvault.cli", "save", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )

    created = save(
        "--project",
        "demo-app",
        "--summary",
        "Use PKCE for login.",
        "--fact",
        "flow: auth code + PKCE",
        "--json",
    )
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["action"] == "created"
    merged = save(
        "--project",
        "demo-app",
        "--summary",
        "Use PKCE for login.",
        "--fact",
        "flow: auth code + PKCE",
        "--fact",
        "why: no client secret",
    )
    assert merged.returncode == 0 and merged.stdout.startswith("merged into agent-memory/")
    refused = save("--project", "demo-app", "--summary", "x", "--fact", "see [[Note]]")
    assert refused.returncode == 2 and "[[wikilinks]]" in refused.stderr
