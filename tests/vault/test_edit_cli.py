"""`memvault fragments edit` and `memvault fragments delete`, run as a person runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from memvault.vault import frontmatter


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def run(home, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMVAULT_HOME": str(home), "MEMVAULT_EMBEDDINGS": "none"}
    return subprocess.run(
        [sys.executable, "-m", "memvault.cli", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def saved(home) -> tuple[str, object]:
    done = run(
        home,
        "save",
        "--project",
        "demo-app",
        "--summary",
        "Loaders are named fetchX.",
        "--fact",
        "rule: loaders are named fetchX",
        "--fact",
        "why: one verb for every read",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    path = home / "vault" / json.loads(done.stdout)["path"]
    return path.relative_to(home / "vault" / "agent-memory").with_suffix("").as_posix(), path


def test_edit_changes_the_fields_given_and_keeps_a_hand_edit(home):
    fragment_id, path = saved(home)
    path.write_text(path.read_text("utf-8").replace("---\n-", "owner: ana\n---\n-"), "utf-8")
    edited = run(
        home,
        "fragments",
        "edit",
        fragment_id,
        "--summary",
        "Data loaders are named fetchX.",
        "--fact",
        "except: streams are named watchX",
        "--remove-fact",
        "why: one verb for every read",
        "--tag",
        "needs review",
        "--importance",
        "0.8",
        "--json",
    )
    assert edited.returncode == 0, edited.stderr
    assert json.loads(edited.stdout)["properties"]["owner"] == "ana"
    written = path.read_text(encoding="utf-8")
    properties = frontmatter.read(written)
    assert properties["owner"] == "ana"
    assert properties["summary"] == "Data loaders are named fetchX."
    assert (properties["importance"], properties["tags"]) == (0.8, ["agent-memory", "needs-review"])
    _, body = frontmatter.split(written)
    assert body == "- rule: loaders are named fetchX\n- except: streams are named watchX\n"


def test_edit_with_replace_facts_replaces_every_fact(home):
    fragment_id, path = saved(home)
    edited = run(home, "fragments", "edit", fragment_id, "--replace-facts", "--fact", "only: one")
    assert edited.returncode == 0, edited.stderr
    assert frontmatter.split(path.read_text(encoding="utf-8"))[1] == "- only: one\n"


def test_edit_of_an_unknown_id_fails_naming_it(home):
    saved(home)
    edited = run(home, "fragments", "edit", "demo-app - nope", "--importance", "0.1")
    assert edited.returncode == 2
    assert "no fragment 'demo-app - nope'" in " ".join(edited.stderr.split())


def test_delete_asks_first_and_keeps_the_fragment_when_the_answer_is_no(home):
    fragment_id, path = saved(home)
    refused = run(home, "fragments", "delete", fragment_id, stdin="n\n")
    assert refused.returncode == 1 and "Delete the fragment" in refused.stdout
    assert path.exists()
    confirmed = run(home, "fragments", "delete", fragment_id, stdin="y\n")
    assert confirmed.returncode == 0, confirmed.stderr
    assert not path.exists()


def test_delete_with_yes_deletes_and_search_no_longer_finds_it(home):
    fragment_id, path = saved(home)
    assert fragment_id in run(home, "search", "fetchX", "--json").stdout
    deleted = run(home, "fragments", "delete", fragment_id, "--yes")
    assert deleted.returncode == 0, deleted.stderr
    assert not path.exists()
    found = run(home, "search", "fetchX", "--json")
    assert found.returncode == 0, found.stderr
    assert fragment_id not in found.stdout


def test_delete_of_an_id_outside_the_fragments_folder_is_refused_before_asking(home):
    saved(home)
    outside = home / "vault" / "mine.md"
    outside.write_text("my own note\n", encoding="utf-8")
    refused = run(home, "fragments", "delete", "../mine", "--yes")
    assert refused.returncode == 2
    assert "leads outside agent-memory/" in refused.stderr
    assert outside.exists()
