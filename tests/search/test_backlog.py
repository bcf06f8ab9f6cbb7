"""The index is caught up only when it has read again every observation rewritten in place
(an LLM's compression, a purge, an upgrade's migration), not only every new event: a
script that waits for "caught up" before it searches must find the new text."""

from __future__ import annotations

from memvault import Memory, present
from memvault.domain import ObservationDraft, Watermark
from tests.helpers import envelope


def test_a_rewritten_observation_keeps_the_index_behind_until_it_is_read_again(tmp_path):
    with Memory.open(home=tmp_path / "home", embeddings="none") as memory:
        memory.capture.observe_many(
            [envelope("s1", n, project="blast", cwd="/src/blast") for n in range(3)]
        )
        memory.index.index_now()
        assert memory.index.backlog().caught_up

        observation = memory.reads.observations("s1")[1]
        rewritten = ObservationDraft(
            type=observation.type, title="Rsync missing from the CI image", narrative="."
        )
        memory.store.upgrade_observations(
            "s1",
            [(observation.event_seq, rewritten)],
            derived_by="llm:x:y",
            through=Watermark("", 9),
        )
        behind = memory.index.backlog()
        assert not behind.caught_up  # every event is indexed, but not what was rewritten
        assert behind.events_not_indexed == 0 and behind.changes_not_indexed == 1
        shown = present.health(memory.health.report())["index"]  # what /health answers
        assert shown["changesNotIndexed"] == 1 and not shown["caughtUp"]

        memory.index.index_now()
        assert memory.index.backlog().caught_up
        found = memory.search("rsync missing", kinds=["observation"])
        assert found[0].document.title.startswith("Rsync missing")
