"""The read layers (L0 search, L1 get, L2 project), access tracking, maintenance, context."""

from __future__ import annotations

import datetime as dt

import pytest

from memvault import Memory
from memvault.errors import InvalidInput
from memvault.search.context import estimate_tokens
from memvault.vault.remember import Draft

TODAY = dt.date(2026, 11, 30)


@pytest.fixture
def memory(tmp_path):
    with Memory.open(home=tmp_path / "home") as opened:
        yield opened


def save(memory, project="demo", summary="s", facts=("k: v",), **kw):
    return memory.remember(Draft(project=project, summary=summary, facts=list(facts), **kw))


def test_get_reads_the_fragment_file_so_a_hand_edit_shows(memory):
    done = save(memory, summary="cache TTL is 60s", facts=["ttl: 60s"])
    hit = memory.search("cache TTL")[0]
    fragment_id = memory.recall.public_id(hit.document)
    assert fragment_id == done.path.stem
    done.path.write_text(done.path.read_text().replace("ttl: 60s", "ttl: 90s"))
    entry = memory.get(fragment_id)
    assert "ttl: 90s" in entry.body
    assert entry.properties["project"] == "demo"


def test_get_of_an_observation_and_of_nothing(memory):
    memory.observe(
        {
            "hookType": "prompt_submit",
            "sessionId": "s",
            "project": "demo",
            "cwd": "/c",
            "timestamp": "2026-11-30T10:00:00Z",
            "data": {"prompt": "why is CI red"},
        }
    )
    memory.index.index_now(vectors=False)
    assert memory.get("obs_1").body == "why is CI red"
    assert memory.get("obs_999") is None
    assert memory.get("../../etc/passwd") is None


def test_reads_are_counted_with_their_time(memory):
    done = save(memory, summary="flaky test list", facts=["test_a: flaky"])
    fragment_id = done.path.stem
    memory.search("flaky")  # L0: seen in a list, not read
    memory.recall.project_memory("demo")  # L2 listing: not read either
    memory.store.sync()  # reads are counted by the writer, not waited for
    key = f"agent-memory/{fragment_id}.md"
    assert memory.store.document("fragment", key).access_count == 0
    memory.get(fragment_id)
    memory.context.context(project="demo", query="flaky tests")  # chosen for a task and shown
    memory.context.context(project="demo")  # the standing block at session start: not counted
    memory.store.sync()
    document = memory.store.document("fragment", key)
    assert document.access_count == 2
    assert document.last_accessed is not None


def test_a_read_the_viewer_makes_is_not_counted_as_a_use(memory):
    done = save(memory, summary="flaky test list", facts=["test_a: flaky"])
    key = f"agent-memory/{done.path.stem}.md"
    entry = memory.get(done.path.stem, counted=False)
    assert entry is not None and "test_a: flaky" in entry.body
    memory.store.sync()
    assert memory.store.document("fragment", key).access_count == 0


def test_project_memory_lists_the_projects_fragments_and_its_summary(memory):
    for n in range(3):
        save(memory, project="alpha", summary=f"alpha fact number {n}", facts=[f"n: {n}"])
    save(memory, project="beta", summary="beta only", facts=["b: 1"])
    l2 = memory.recall.project_memory("alpha")
    assert l2.total == 3 and {d.project for d in l2.fragments} == {"alpha"}
    assert l2.summary is None


def _aged(memory, summary, importance, days_old):
    date = (TODAY - dt.timedelta(days=days_old)).isoformat()
    return save(memory, summary=summary, facts=[f"f: {summary}"], importance=importance, date=date)


def test_archive_takes_unused_low_importance_fragments_at_the_boundaries(memory):
    below = _aged(memory, "below threshold ninety days", 0.29, 90)
    at_threshold = _aged(memory, "importance exactly point three", 0.3, 200)
    recent = _aged(memory, "eighty nine days old", 0.1, 89)
    report = memory.fragments.maintain(today=TODAY)
    assert report.archived == [f"_archive/{below.path.stem}"]
    assert not below.path.exists() and at_threshold.path.exists() and recent.path.exists()
    assert not memory.search("below threshold")
    assert memory.search("below threshold", include_archived=True)[0].document.archived


def test_a_recent_read_keeps_a_fragment_out_of_the_archive(memory):
    old = _aged(memory, "old but still read", 0.1, 400)
    memory.get(old.path.stem)  # read today (the real today is after TODAY)
    assert memory.fragments.maintain(today=TODAY).archived == []


def test_dry_run_changes_nothing(memory):
    old = _aged(memory, "forgotten thing", 0.1, 400)
    assert memory.fragments.maintain(today=TODAY, dry_run=True).archived == [
        old.path.stem.join(["_archive/", ""])
    ]
    assert old.path.exists()


def test_a_project_summary_is_written_past_twenty_fragments(memory):
    topics = [
        "redis",
        "kafka",
        "nginx",
        "grafana",
        "vault",
        "consul",
        "envoy",
        "istio",
        "helm",
        "argo",
        "jaeger",
        "loki",
        "tempo",
        "minio",
        "etcd",
        "calico",
        "cilium",
        "traefik",
        "keda",
        "velero",
        "falco",
    ]
    for topic in topics[:20]:
        save(
            memory, project="infra", summary=f"we run {topic} in production", facts=[f"t: {topic}"]
        )
    assert memory.fragments.maintain(today=TODAY).summarized == []
    save(memory, project="infra", summary="we run falco in production", facts=["t: falco"])
    assert memory.fragments.maintain(today=TODAY).summarized == ["infra"]
    l2 = memory.recall.project_memory("infra")
    assert "falco" in l2.summary and l2.summary.count("\n") >= 20
    assert memory.fragments.maintain(today=TODAY).summarized == []  # unchanged: not rewritten
    assert not memory.search("production", kinds=["fragment"], limit=100)[
        0
    ].document.key.startswith("agent-memory/_projects")
    assert memory.fragments.check_fragments().errors == []


def test_context_opens_with_the_report_line_and_keeps_to_its_budget(memory):
    for n in range(30):
        save(
            memory,
            project="demo",
            summary=f"decision {n}: use the retry wrapper for service {n}",
            facts=[f"service{n}: wrapped", "why: timeouts"],
            importance=0.9,
        )
    packed = memory.context.context(project="demo", query="retry wrapper", budget=300)
    assert packed.text.startswith("📖 agent memory：讀取 ")
    assert packed.tokens <= 300 and estimate_tokens(packed.text) <= 300 + 20
    assert packed.truncated
    count = int(packed.text.split("讀取 ")[1].split(" ")[0])
    assert 1 <= count < 30
    assert packed.text.count("**") == 2 * count


def test_context_without_memory_says_so(memory):
    packed = memory.context.context(project="empty")
    assert packed.text.startswith("📖 agent memory：讀取 0 個碎片")


def test_context_budget_is_checked(memory):
    with pytest.raises(InvalidInput, match="budget"):
        memory.context.context(project="x", budget=10)


def test_forget_deletes_a_fragment_and_refuses_observations(memory):
    done = save(memory, summary="temporary note", facts=["x: y"])
    memory.fragments.forget(done.path.stem)
    assert not done.path.exists() and not memory.search("temporary note")
    with pytest.raises(InvalidInput, match="no memory"):
        memory.fragments.forget("nope")


def test_enrich_finds_memory_and_past_errors_about_files(memory):
    memory.observe(
        {
            "hookType": "post_tool_failure",
            "sessionId": "s",
            "project": "demo",
            "cwd": "/c",
            "timestamp": "2026-11-30T10:00:00Z",
            "data": {
                "tool_name": "Edit",
                "tool_input": {"file_path": "/c/src/billing.py"},
                "error": "old_string not found in billing.py",
            },
        }
    )
    save(memory, summary="billing.py rounds with Decimal", facts=["rounding: Decimal"])
    packed = memory.context.enrich(files=["/c/src/billing.py"], project="demo")
    assert "Decimal" in packed.text and "old_string not found" in packed.text


def test_an_archived_fragment_keeps_its_reads_and_a_forgotten_ones_reads_go(memory):
    old = _aged(memory, "rarely used setting", 0.1, 400)
    keep = _aged(memory, "another old one", 0.1, 400)
    memory.get(keep.path.stem)
    memory.store.sync()
    report = memory.fragments.maintain(today=TODAY + dt.timedelta(days=400))
    assert f"_archive/{old.path.stem}" in report.archived
    assert f"_archive/{keep.path.stem}" in report.archived
    archived = memory.store.document("fragment", f"agent-memory/_archive/{keep.path.name}")
    assert archived.access_count == 1
    memory.fragments.forget(f"_archive/{keep.path.stem}")
    again = _aged(memory, "another old one", 0.1, 400)
    assert again.path == keep.path
    assert memory.store.document("fragment", f"agent-memory/{keep.path.name}").access_count == 0


def test_project_summaries_of_look_alike_project_names_do_not_collide(memory):
    for project in ("a/b", "a:b"):
        for n in range(21):
            save(memory, project=project, summary=f"{project} fact {n} word{n}", facts=[f"n: {n}"])
    assert sorted(memory.fragments.maintain(today=TODAY).summarized) == ["a/b", "a:b"]
    assert memory.fragments.maintain(today=TODAY).summarized == []
    assert "a/b fact" in memory.recall.project_memory("a/b").summary
    assert "a:b fact" in memory.recall.project_memory("a:b").summary


def test_context_ends_with_where_to_look_next(memory):
    save(memory, summary="the API uses cursor pagination", facts=["page: cursor"])
    text = memory.context.context(project="demo", query="pagination").text
    assert text.splitlines()[-1].startswith("(not enough? next: the knowledge base")
    assert "knowledge base" not in memory.context.context(project="nothing here").text
