"""Rows as both engines read them, made into the domain's values, and the small pure
helpers their parts share: the engines select the same columns in the same order, so one
mapping serves both."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from memvault import jsontext
from memvault.domain import BoardRow, Job, Observation, Session, Watermark, observation_id
from memvault.store.contract import VaultWrite

# The board mirror's columns, in the order ``board_row`` reads them.
BOARD_COLUMNS = (
    "session_id, agent_name, topic, summary, keywords, status, referenced_by, started_at, "
    "updated_at"
)


def board_row(row: tuple) -> BoardRow:
    return BoardRow(*row[:6], json.loads(row[6]), *row[7:])


def session(row: tuple) -> Session:
    return Session(
        id=row[0],
        project=row[1],
        cwd=row[2],
        agent_id=row[3],
        title=row[4],
        board_session_id=row[5],
        created_at=row[6],
        first_event_at=row[7],
        last_event_at=row[8],
        event_count=row[9],
        observation_count=row[10],
        summarized=Watermark(row[11], row[12]),
        extracted=Watermark(row[13], row[14]),
        reflected=Watermark(row[15], row[16]),
        graph_extracted=Watermark(row[17], row[18]),
        summary_revision=row[19],
        summarized_observation_count=row[20],
        last_sweep_attempt_at=row[21],
        compressed=Watermark(row[22], row[23]),
    )


def observation(row: tuple) -> Observation:
    return Observation(
        id=observation_id(row[0]),
        event_seq=row[0],
        session_id=row[1],
        client_event_id=row[2],
        occurred_at=row[3],
        hook_type=row[4],
        type=row[5],
        title=row[6],
        narrative=row[7],
        facts=json.loads(row[8]),
        files=json.loads(row[9]),
        concepts=json.loads(row[10]),
        importance=row[11],
        derived_by=row[12],
        updated_at=row[13],
    )


def job(row: tuple) -> Job:
    return Job(
        id=row[0],
        kind=row[1],
        dedupe_key=row[2],
        payload=json.loads(row[3]),
        attempts=row[4],
        run_after=row[5],
        claimed_by=row[6],
        claimed_until=row[7],
    )


def vault_write(row: tuple) -> VaultWrite:
    return VaultWrite(
        id=int(row[0]),
        kind=row[1],
        payload=json.loads(row[2]),
        done=bool(row[3]),
        result=None if row[4] is None else json.loads(row[4]),
    )


def counted(counts: dict[str, int], prefix: str) -> dict[str, int]:
    return {
        name.removeprefix(prefix): value
        for name, value in sorted(counts.items())
        if name.startswith(prefix) and value
    }


def chunks(items: Sequence[int], size: int) -> Iterable[Sequence[int]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def without_source(sources: str, source: str) -> str:
    return jsontext.dumps([s for s in json.loads(sources) if s != source])
