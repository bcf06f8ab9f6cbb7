"""After five failed calls in a row the provider is left alone for a while, then tried again."""

from __future__ import annotations

import threading
import time

import pytest

from memvault.llm import LLMError, LLMUnavailable
from tests.llm.conftest import FAST

COOLDOWN = FAST.cooldown_seconds


def fail_five_calls(llm, llm_server) -> None:
    llm_server.answers.extend([500] * 5 * FAST.attempts)
    for _ in range(5):
        with pytest.raises(LLMError) as raised:
            llm.complete("s", "p")
        assert not isinstance(raised.value, LLMUnavailable)


def test_five_failed_calls_open_the_circuit_and_later_calls_make_no_request(llm_server, make_llm):
    llm = make_llm(llm_server.base_url)
    fail_five_calls(llm, llm_server)
    sent = len(llm_server.requests)

    started = time.monotonic()
    with pytest.raises(LLMUnavailable, match=r"paused.*5 consecutive failures.*HTTP 500"):
        llm.complete("s", "p")

    assert time.monotonic() - started < 0.05
    assert len(llm_server.requests) == sent


def test_after_the_cooldown_one_trial_call_closes_the_circuit(llm_server, make_llm):
    llm = make_llm(llm_server.base_url)
    fail_five_calls(llm, llm_server)

    time.sleep(COOLDOWN + 0.02)

    assert llm.complete("s", "p") == llm_server.text
    assert llm.complete("s", "p") == llm_server.text


def test_a_failed_trial_call_opens_the_circuit_again_at_once(llm_server, make_llm):
    llm = make_llm(llm_server.base_url)
    fail_five_calls(llm, llm_server)
    time.sleep(COOLDOWN + 0.02)

    llm_server.answers.extend([500] * FAST.attempts)
    with pytest.raises(LLMError) as raised:
        llm.complete("s", "p")
    assert not isinstance(raised.value, LLMUnavailable)

    with pytest.raises(LLMUnavailable):
        llm.complete("s", "p")


def test_while_the_trial_call_runs_other_calls_are_refused(llm_server, make_llm):
    llm = make_llm(llm_server.base_url)
    fail_five_calls(llm, llm_server)
    time.sleep(COOLDOWN + 0.02)
    llm_server.delay = 0.2
    sent = len(llm_server.requests)

    trial = threading.Thread(target=llm.complete, args=("s", "trial"))
    trial.start()
    time.sleep(0.1)
    with pytest.raises(LLMUnavailable, match="trial call"):
        llm.complete("s", "p")
    trial.join()

    (trial_request,) = llm_server.requests[sent:]
    assert trial_request.body["messages"][-1]["content"] == "trial"


def test_a_rejected_request_does_not_count_towards_opening_the_circuit(llm_server, make_llm):
    llm = make_llm(llm_server.base_url)
    llm_server.answers.extend([400] * 6)

    for _ in range(6):
        with pytest.raises(LLMError) as raised:
            llm.complete("s", "p")
        assert not isinstance(raised.value, LLMUnavailable)

    assert llm.complete("s", "p") == llm_server.text


def test_a_success_resets_the_count_of_failures(llm_server, make_llm):
    llm = make_llm(llm_server.base_url)
    for _ in range(2):
        llm_server.answers.extend([500] * 4 * FAST.attempts)
        for _ in range(4):
            with pytest.raises(LLMError):
                llm.complete("s", "p")
        assert llm.complete("s", "p") == llm_server.text
