"""One gate in the process: never more background LLM calls at once than configured."""

from __future__ import annotations

import threading
import time

from memvault.llm import Gate, open_llm
from tests.llm.conftest import require_sdk


def call_from_threads(llms, per_llm: int) -> list[str]:
    answers: list[str] = []
    threads = [
        threading.Thread(target=lambda llm=llm: answers.append(llm.complete("s", "p")))
        for llm in llms
        for _ in range(per_llm)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    return answers


def test_providers_sharing_a_gate_never_exceed_its_size(llm_server, make_llm):
    llm_server.delay = 0.1
    gate = Gate(2)
    llms = [make_llm(llm_server.base_url, gate=gate) for _ in range(2)]

    answers = call_from_threads(llms, per_llm=3)

    assert len(answers) == 6
    assert llm_server.most_at_once == 2


def test_open_llm_providers_share_one_gate_sized_by_the_settings(llm_server, settings):
    require_sdk("openai")
    llm_server.delay = 0.1
    options = {"llm": "openai", "llm_url": llm_server.base_url, "llm_model": "m"}
    first = open_llm(settings(**options, llm_concurrency=3))
    second = open_llm(settings(**options, llm_concurrency=3))
    try:
        assert first.gate is second.gate
        assert first.gate.concurrency == 3

        answers = call_from_threads([first, second], per_llm=4)
    finally:
        first.close()
        second.close()

    assert len(answers) == 8
    assert llm_server.most_at_once == 3


def test_a_caller_waits_for_a_free_slot():
    gate = Gate(1)
    entered = threading.Event()

    def second_caller() -> None:
        with gate:
            entered.set()

    with gate:
        waiting = threading.Thread(target=second_caller)
        waiting.start()
        assert not entered.wait(0.1)
    assert entered.wait(1)
    waiting.join()


def test_a_larger_gate_lets_waiting_callers_in_at_once():
    gate = Gate(1)
    entered = threading.Event()

    def second_caller() -> None:
        with gate:
            entered.set()

    with gate:
        waiting = threading.Thread(target=second_caller)
        waiting.start()
        time.sleep(0.05)
        gate.resize(2)
        assert entered.wait(1)
    waiting.join()
