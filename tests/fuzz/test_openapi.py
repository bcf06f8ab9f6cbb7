"""Property-based: every operation of the served OpenAPI document, given valid and
invalid input, answers without a server error, without hanging, and only with the status
codes the document gives it; and so do operations chained by the document's links.

Runs schemathesis against a real ``memvault serve`` on loopback. The budget (examples per
operation and mode) is small enough for ``make test``; ``MEMVAULT_FUZZ_EXAMPLES`` raises it
(``make fuzz``)."""

from __future__ import annotations

import os

import hypothesis
import hypothesis.errors
import pytest
import schemathesis
from hypothesis import HealthCheck
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error, status_code_conformance
from schemathesis.errors import FailureGroup

from tests.helpers import Server

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("MEMVAULT_FUZZ_EXAMPLES", "40"))
REQUEST_TIMEOUT = 20.0  # seconds: an answer slower than this is a hang
CHECKS = [not_a_server_error, status_code_conformance]
BUDGET = hypothesis.settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    # The short run in `make test` tries the same examples every time, so it never turns
    # red by chance; `make fuzz` (MEMVAULT_FUZZ_EXAMPLES set) explores new ones each run.
    derandomize="MEMVAULT_FUZZ_EXAMPLES" not in os.environ,
    suppress_health_check=list(HealthCheck),
    phases=[hypothesis.Phase.generate],
)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    # Generated transcript imports (`path: "~"`) look in a home of the test's own.
    (root / "user").mkdir()
    running = Server(root / "home", {"HOME": str(root / "user")}).start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def api(served):
    return schemathesis.openapi.from_url(f"{served.url}/openapi.json")


def operations(api):
    for result in api.get_all_operations():
        yield result.ok()


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_operation_answers_a_server_error_or_hangs(api, served, mode):
    failures = []
    for operation in operations(api):

        @hypothesis.given(case=operation.as_strategy(generation_mode=mode))
        @BUDGET
        def exercise(case):
            case.call_and_validate(checks=CHECKS, timeout=REQUEST_TIMEOUT)

        try:
            exercise()
        except hypothesis.errors.Unsatisfiable:
            continue  # nothing in this operation can be made invalid
        except (FailureGroup, Exception) as exc:  # each operation is tried, all are reported
            failures.append(f"{operation.label}: {exc}"[:3000])
    assert not failures, "\n\n".join(failures)
    assert "Traceback" not in served.log()


# A stateful run over the whole document, and runs among a few operations each, so that a
# budget that fits in ``make test`` still carries ids from one answer into the next: each
# names what it must reach.
AREAS = {
    "everything": (r"^/", "GET /agentmemory/board/sessions/{session_id}"),
    "board": (
        r"^/agentmemory/(board/|session/start)",
        "GET /agentmemory/board/sessions/{session_id}",
    ),
    "fragments": (
        r"^/agentmemory/(observe$|remember|memories/|fragments/|forget)",
        "GET /agentmemory/fragments/{fragment_id}",
    ),
}


@pytest.mark.parametrize("area", AREAS)
def test_linked_operations_in_sequence_never_answer_a_server_error(api, served, area):
    """Stateful: the OpenAPI links carry what one answer names (a board row registered, a
    fragment written) into the operations that take it, so the board and fragment routes
    are reached with ids that exist."""
    paths, must_reach = AREAS[area]
    reached: set[str] = set()

    class Linked(api.include(path_regex=paths).as_state_machine()):
        def call(self, case, **kwargs):
            return case.call(timeout=REQUEST_TIMEOUT, **kwargs)

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            if response.status_code < 400:
                reached.add(case.operation.label)
            case.validate_response(response, checks=CHECKS)

    for _ in range(3):
        try:
            Linked.run(settings=hypothesis.settings(BUDGET, stateful_step_count=10))
            break
        except hypothesis.errors.FlakyStrategyDefinition:
            # A scenario replayed against a server whose state has moved on draws other
            # steps; start afresh (schemathesis's own runner does the same).
            continue
    assert "Traceback" not in served.log()
    assert must_reach in reached, "\n".join(sorted(reached))
