"""The pipeline with an LLM: a real OpenAI-compatible server on loopback answers with scripted
completions and records what it was asked."""

from __future__ import annotations

import json
import re
import time

import pytest

from memvault import Memory
from memvault.domain import Job
from memvault.llm import LLMError
from memvault.pipeline.jobs import COMPRESS, SUMMARIZE
from memvault.vault.fragments import Fragment
from tests.llm.conftest import require_sdk
from tests.llm_server import LLMServer, Request
from tests.pipeline.test_service import step, work

SUMMARY = {
    "topic": "Login test fix",
    "current_context": "Fixed the failing login test by moving password hashing to bcrypt.",
    "decisions": ["use bcrypt instead of md5: md5 is broken for passwords"],
    "open_questions": ["should old md5 hashes be migrated on login?"],
    "next_actions": ["migrate stored hashes"],
    "keywords": ["bcrypt", "login", "pytest"],
}


def kind_of(request: Request) -> str:
    system = request.body["messages"][0]["content"]
    if "running summary" in system:
        return "summary"
    if "worth remembering" in system:
        return "fragments"
    if "raw tool calls" in system:
        return "compress"
    raise AssertionError(f"unexpected prompt: {system[:80]}")


def user_text(request: Request) -> str:
    return request.body["messages"][-1]["content"]


class Script:
    """Answers by task; a task set to an int fails with that HTTP status."""

    def __init__(self) -> None:
        self.summary: dict | str | int = SUMMARY
        self.fragments: dict | str | int = {"fragments": []}
        self.compress: dict | str | int | None = None

    def __call__(self, request: Request) -> str | int:
        kind = kind_of(request)
        if kind == "compress" and self.compress is None:
            refs = [line.split("]")[0][1:] for line in user_text(request).split("\n\n")]
            return json.dumps(
                {
                    "observations": [
                        {
                            "ref": ref,
                            "title": f"Upgraded {ref}: tests run with pytest",
                            "narrative": "The agent ran the login tests; all three passed.",
                            "facts": ["3 passed"],
                            "concepts": ["pytest", "login"],
                            "importance": 6,
                        }
                        for ref in refs
                    ]
                }
            )
        answer = getattr(self, kind)
        if isinstance(answer, int | str):
            return answer
        return "Here you are:\n```json\n" + json.dumps(answer, ensure_ascii=False) + "\n```"


@pytest.fixture
def server():
    require_sdk("openai")
    with LLMServer() as running:
        running.respond = Script()
        yield running


def open_memory(tmp_path, server: LLMServer, **knobs) -> Memory:
    return Memory.open(
        home=tmp_path / "home",
        llm="openai",
        llm_url=server.base_url,
        llm_model="test-model",
        llm_api_key="test-key",
        # The script answers the pipeline's tasks; translating searches is tested apart
        # (tests/search/test_translation.py).
        translate_requests=False,
        **knobs,
    )


@pytest.fixture
def memory(tmp_path, server):
    with open_memory(tmp_path, server) as opened:
        yield opened


def asked(server: LLMServer, kind: str) -> list[Request]:
    return [r for r in server.requests if kind_of(r) == kind]


# -- summaries ------------------------------------------------------------------------------


def test_the_llm_writes_the_summary_and_the_log_keeps_the_facts(memory, server):
    started = memory.context.start_session({"sessionId": "s1", "project": "demo-app", "cwd": "/c"})
    memory.observe_many(work("s1"))
    summary = memory.pipeline.summarize_session("s1")
    assert summary.current_context == SUMMARY["current_context"]
    assert summary.decisions == SUMMARY["decisions"]
    assert summary.derived_by == "llm:openai:test-model"
    assert "src/login.py" in summary.edited_files  # from the log, not from the answer
    prompt = user_text(asked(server, "summary")[0])
    assert "[e2]" in prompt and "pytest tests/test_login.py" in prompt
    row = memory.board.row_in_file(started.board.session_id)
    assert row.status == "active" and row.summary.strip() == SUMMARY["current_context"]
    assert row.topic.strip() == "Login test fix"
    assert SUMMARY["current_context"] in memory.board.snapshot_text(started.board.session_id)


def test_an_incremental_run_sends_the_previous_summary_and_only_new_steps(memory, server):
    memory.observe_many(work("s1"))
    memory.pipeline.summarize_session("s1")
    memory.observe(step("s1", 20, "prompt_submit", {"prompt": "Now document the auth flow"}))
    memory.pipeline.summarize_session("s1")
    second = user_text(asked(server, "summary")[1])
    assert "Previous summary" in second and SUMMARY["current_context"] in second
    assert "document the auth flow" in second and "pytest tests/test_login.py" not in second


def test_a_failed_llm_call_fails_the_run_and_leaves_the_watermark(memory, server):
    server.respond.summary = 500
    memory.observe_many(work("s1"))
    with pytest.raises(LLMError, match="test-model"):
        memory.pipeline.summarize_session("s1", fallback=False)
    assert memory.reads.session("s1").summarized.seq is None
    server.respond.summary = SUMMARY
    assert memory.pipeline.summarize_session("s1", fallback=False) is not None


def test_an_answer_that_is_not_json_is_a_failure_too(memory, server):
    server.respond.summary = "I summarized it for you: the tests pass now."
    memory.observe_many(work("s1"))
    with pytest.raises(LLMError, match="no JSON object"):
        memory.pipeline.summarize_session("s1", fallback=False)
    assert memory.reads.session("s1").summary_revision == 0


def test_the_last_attempt_falls_back_to_the_offline_summary(memory, server):
    server.respond.summary = 503
    memory.observe_many(work("s1"))
    worker = memory.pipeline.worker
    job = Job(1, SUMMARIZE, "s1", {"sessionId": "s1"}, worker.max_attempts, "", None, None)
    memory.pipeline._summarize_job(job)  # the final attempt: offline rather than nothing
    stored = memory.reads.session_summary("s1")
    assert stored["derived_by"] == "extractive" and "src/login.py" in stored["files"]


# -- fragments ------------------------------------------------------------------------------


def test_the_llm_finds_the_fragments_in_compressed_form(memory, server):
    server.respond.fragments = {
        "fragments": [
            {
                "kind": "decision",
                "summary": "Passwords are hashed with bcrypt, not md5",
                "facts": ["hash: bcrypt ∵ md5 is broken", "see [[Auth notes]]"],
                "importance": 0.8,
                "events": ["e4", "e2"],
            },
            {"kind": "chitchat", "summary": "The user said hello", "facts": ["greeting"]},
            {"kind": "finding", "summary": "", "facts": ["nothing"]},
        ]
    }
    memory.observe_many(work("s1"))
    written = memory.pipeline.extract_session("s1")
    assert len(written) == 1  # the items without a kind or a sentence are dropped
    fragment = Fragment.read(written[0].path)
    assert fragment.summary == "Passwords are hashed with bcrypt, not md5."
    body = written[0].path.read_text(encoding="utf-8")
    assert "- hash: bcrypt ∵ md5 is broken" in body and "[[" not in body
    assert "- s1-1" in body and "- s1-3" in body  # events cited as the client's ids
    assert "importance: 0.8" in body
    assert memory.reads.session("s1").extracted.seq is not None


def test_with_nothing_worth_keeping_no_fragment_is_written(memory, server):
    memory.observe_many(work("s1"))
    assert memory.pipeline.extract_session("s1") == []
    assert memory.reads.session("s1").extracted.seq is not None


# -- compression and its grace period ------------------------------------------------------------


def test_compression_upgrades_tool_observations_in_place_and_search_follows(tmp_path, server):
    with open_memory(tmp_path, server, auto_compress=True) as memory:
        memory.observe_many(work("s1"))
        assert memory.search("Upgraded", kinds=["observation"]) == []  # indexed as they came
        assert memory.pipeline.compress_session("s1") == 2  # the edit and the test run
        observations = {o.title: o for o in memory.reads.observations("s1")}
        upgraded = [o for o in observations.values() if o.derived_by != "synthetic"]
        assert len(upgraded) == 2
        assert all(o.derived_by == "llm:openai:test-model" for o in upgraded)
        assert {o.type for o in upgraded} == {"file_edit", "command_run"}  # type stays
        assert upgraded[0].concepts == ["pytest", "login"]
        prompts = [o for o in observations.values() if o.hook_type == "prompt_submit"]
        assert prompts[0].derived_by == "synthetic"  # what people wrote is not rewritten
        assert len(asked(server, "compress")) == 1  # one call for the batch
        hits = memory.search("Upgraded", kinds=["observation"])
        # Re-indexed: the upgraded rows first, then the neighbours that carry them as context.
        assert {h.document.key for h in hits[:2]} == {o.id for o in upgraded}
        assert memory.pipeline.compress_session("s1") == 0  # past the watermark now


def test_the_running_index_reads_an_upgrade_at_once(tmp_path, server):
    """With the index in the background (a server), a compression wakes it: the rewritten
    observations do not wait for its safety-net timer (30 s)."""
    with open_memory(tmp_path, server, auto_compress=True, embeddings="none") as memory:
        memory.index.start()
        try:
            memory.observe_many(work("s1"))
            assert wait_until(lambda: memory.index.backlog().caught_up, 20)
            assert memory.pipeline.compress_session("s1") == 2
            assert wait_until(lambda: memory.index.backlog().caught_up, 10)
            assert len(memory.search("Upgraded", kinds=["observation"])) >= 2
        finally:
            memory.index.stop()


def wait_until(done, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_summaries_wait_for_the_upgrade_within_the_grace_period(tmp_path, server):
    knobs = {"auto_compress": True, "compress_grace_ms": 60_000}
    with open_memory(tmp_path, server, **knobs) as memory:
        memory.observe_many(work("s1"))
        assert memory.pipeline.summarize_session("s1") is None  # held for the upgrade
        assert memory.reads.session("s1").summarized.seq is None
        memory.pipeline.compress_session("s1")
        summary = memory.pipeline.summarize_session("s1")
        assert summary is not None
        prompt = user_text(asked(server, "summary")[0])
        assert "The agent ran the login tests" in prompt  # it read the upgraded rows


def test_after_the_grace_period_a_failing_compressor_is_not_waited_for(tmp_path, server):
    server.respond.compress = 400  # refused at once, no retries
    knobs = {"auto_compress": True, "compress_grace_ms": 1500}
    with open_memory(tmp_path, server, **knobs) as memory:
        memory.observe_many(work("s1"))
        with pytest.raises(LLMError):
            memory.pipeline.compress_session("s1")
        assert memory.pipeline.summarize_session("s1") is None
        time.sleep(1.6)
        assert memory.pipeline.summarize_session("s1") is not None
        assert memory.reads.session("s1").summarized_observation_count == 4


def test_the_worker_compresses_then_summarizes_on_its_own(tmp_path, server):
    knobs = {"auto_compress": True, "compress_grace_ms": 30_000}
    with open_memory(tmp_path, server, **knobs) as memory:
        memory.observe_many(work("s1"))
        memory.pipeline.request_summary("s1")
        worker = memory.pipeline.worker
        worker.drain()  # the summary is held and queues the compression
        memory.pipeline.signals()
        worker.drain()
        kinds = [kind_of(r) for r in server.requests]
        assert kinds.index("compress") < kinds.index("summary")
        assert memory.reads.session_summary("s1")["derived_by"] == "llm:openai:test-model"
        assert memory.store.claim_job("probe", [COMPRESS], lease_seconds=1) is None


def test_offline_with_no_llm_configured_nothing_is_called(tmp_path, server):
    no_llm = {"llm": "auto", "llm_url": None, "llm_api_key": None, "auto_compress": True}
    with Memory.open(home=tmp_path / "home", **no_llm) as memory:
        assert memory.pipeline.llm is None and not memory.pipeline.compressing
        memory.observe_many(work("s1"))
        assert memory.pipeline.summarize_session("s1").derived_by == "extractive"
    assert server.requests == []


# -- answers that must not be taken, and answers that must ------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        {"observations": []},  # nothing upgraded is not an upgrade
        {"observations": [{"ref": "o0", "title": "t", "narrative": "n"}]},  # numbered from 0
        {"observations": [{"ref": "o1", "title": "t", "narrative": "n"}]},  # one of two
        {"observations": [{"ref": "o1", "title": "t"}, {"ref": "o2", "title": "t"}]},
    ],
)
def test_a_compression_answer_that_does_not_cover_the_batch_moves_nothing(tmp_path, server, answer):
    server.respond.compress = json.dumps(answer)
    with open_memory(tmp_path, server, auto_compress=True) as memory:
        memory.observe_many(work("s1"))
        with pytest.raises(LLMError):
            memory.pipeline.compress_session("s1")
        assert memory.reads.session("s1").compressed.seq is None
        assert {o.derived_by for o in memory.reads.observations("s1")} == {"synthetic"}


def test_runs_are_cut_to_the_input_limit_and_every_step_sent_is_covered(tmp_path, server):
    long_output = "line of test output " * 60  # about 300 tokens a step
    events = [
        step(
            "s1",
            n,
            "post_tool_use",
            {
                "tool_name": "Bash",
                "tool_input": {"command": f"make t{n}"},
                "tool_output": long_output,
            },
        )
        for n in range(12)
    ]
    with open_memory(tmp_path, server, llm_max_input_tokens=1500) as memory:
        memory.observe_many(events)
        memory.pipeline.extract_session("s1")
        first = memory.reads.session("s1").extracted.seq
        prompt = user_text(asked(server, "fragments")[0])
        shown = [int(tag[2:-1]) for tag in re.findall(r"\[e\d+\]", prompt)]
        assert 0 < first < 12 and shown == list(range(1, first + 1))
        assert "characters cut" not in prompt  # nothing cut out of the middle
        for _ in range(12):  # each run takes what fits
            memory.pipeline.extract_session("s1")
        assert memory.reads.session("s1").extracted.seq == 12
        covered = {
            int(tag[2:-1])
            for request in asked(server, "fragments")
            for tag in re.findall(r"\[e\d+\]", user_text(request))
        }
        assert covered == set(range(1, 13))


def test_a_repeated_extraction_writes_the_kept_answer_not_a_new_one(tmp_path, server, monkeypatch):
    first = {
        "fragments": [
            {
                "kind": "decision",
                "summary": "Passwords use bcrypt",
                "facts": ["hash: bcrypt"],
                "events": ["e4"],
            }
        ]
    }
    server.respond.fragments = first
    with open_memory(tmp_path, server) as memory:
        memory.observe_many(work("s1"))
        store = memory.store
        real = store.advance_extraction
        monkeypatch.setattr(store, "advance_extraction", lambda *a, **k: 1 / 0)  # crash
        with pytest.raises(ZeroDivisionError):
            memory.pipeline.extract_session("s1")
        monkeypatch.setattr(store, "advance_extraction", real)
        server.respond.fragments = {
            "fragments": [
                {
                    "kind": "lesson",
                    "summary": "Use a slow hash for secrets",
                    "facts": ["kdf: slow"],
                    "events": ["e2"],
                }
            ]
        }
        memory.pipeline.extract_session("s1")
        files = sorted(memory.settings.fragments_path.glob("*.md"))
        assert len(files) == 1 and "hash: bcrypt" in files[0].read_text(encoding="utf-8")
        assert len(asked(server, "fragments")) == 1  # asked once
        assert store.kept_result("extract", "s1", 4) is None  # dropped with the watermark move


@pytest.mark.parametrize(
    "wrapped",
    [
        '<think>the shape is {"a": 1}, keep it short</think>\n{body}',
        "{body}\n\nNote: I left out {trivial} steps.",
        'For example {"topic": "x"} would be wrong. Here: {body}',
    ],
)
def test_an_answer_with_braces_around_it_is_read(memory, server, wrapped):
    server.respond.summary = wrapped.replace("{body}", json.dumps(SUMMARY))
    memory.observe_many(work("s1"))
    summary = memory.pipeline.summarize_session("s1", fallback=False)
    assert summary.current_context == SUMMARY["current_context"]


def test_odd_values_in_an_answer_are_dropped_not_fatal(memory, server):
    server.respond.fragments = (
        '{"fragments": [{"kind": "decision", "summary": "Use bcrypt", "importance": Infinity,'
        ' "facts": ["see [[[[Auth notes]]]]", "hash: bcrypt"], "events": ["e4"]}]}'
    )
    memory.observe_many(work("s1"))
    (written,) = memory.pipeline.extract_session("s1", fallback=False)
    body = written.path.read_text(encoding="utf-8")
    assert "- see Auth notes" in body and "[[" not in body and "importance: 0.7" in body


def test_the_answer_language_follows_the_user(memory, server):
    memory.observe(step("s1", 0, "prompt_submit", {"prompt": "ログインのテストを直してください"}))
    memory.pipeline.summarize_session("s1")
    assert "Japanese" in asked(server, "summary")[0].body["messages"][0]["content"]
    server.respond.summary = {**SUMMARY, "current_context": "修复了登录测试。"}
    memory.observe(step("s2", 0, "prompt_submit", {"prompt": "修复登录测试"}))
    memory.pipeline.summarize_session("s2")
    memory.observe(
        step(
            "s2",
            1,
            "post_tool_use",
            {"tool_name": "Bash", "tool_input": {"command": "pytest"}, "tool_output": "ok"},
        )
    )
    memory.pipeline.summarize_session("s2")  # new steps without a prompt
    assert "Chinese" in asked(server, "summary")[-1].body["messages"][0]["content"]


def test_compression_waits_to_batch_and_is_called_in_when_a_summary_waits(tmp_path, server):
    knobs = {"auto_compress": True, "compress_grace_ms": 60_000}
    with open_memory(tmp_path, server, **knobs) as memory:
        memory.observe_many(work("s1"))
        memory.pipeline.signals()
        assert memory.store.claim_job("probe", [COMPRESS], lease_seconds=1) is None  # later
        assert memory.pipeline.summarize_session("s1") is None  # held: calls it in
        job = memory.store.claim_job("probe", [COMPRESS], lease_seconds=60)
        assert job is not None and job.payload == {"sessionId": "s1"}


def test_compression_never_waits_behind_what_is_summarized(tmp_path, server):
    with open_memory(tmp_path, server, auto_compress=True, compress_grace_ms=0) as memory:
        memory.observe_many(work("s1"))
        memory.pipeline.summarize_session("s1")  # no grace: summarized before compression
        assert memory.store.sessions_to_compress(limit=10) == []
        assert memory.pipeline.compress_session("s1") == 0
        assert (
            memory.reads.session("s1").compressed.seq == memory.reads.session("s1").summarized.seq
        )
        assert asked(server, "compress") == []
