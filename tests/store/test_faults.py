"""Writes the database cannot take for now fail as ``StoreUnavailable`` naming the cause,
bounded in time, with nothing written; writes pass again by themselves once it is gone."""

from __future__ import annotations

import threading

import pytest

from memvault.domain import NewEvent
from memvault.errors import StoreUnavailable
from memvault.ingest import prepare
from memvault.ingest.envelope import Envelope, validate
from memvault.store.sqlite import SQLiteStore
from tests.helpers import envelope
from tests.store.faults import fill, locked_by_another_process, small_disk

pytestmark = pytest.mark.sqlite_only

LOCK_WAIT = 0.3


def event(session: str, n: int, **overrides) -> NewEvent:
    return prepare(validate(Envelope, envelope(session, n, **overrides)))


@pytest.fixture
def store(tmp_path):
    opened = SQLiteStore(tmp_path / "memvault.db", lock_wait=LOCK_WAIT)
    yield opened
    opened.close()


def test_a_write_behind_another_process_lock_fails_naming_the_locked_database(store):
    with locked_by_another_process(store.path):
        with pytest.raises(StoreUnavailable) as failed:
            store.ensure_session("s1", project="p", cwd="/p")
        assert f"the database {store.path} is locked by another process" in str(failed.value)
        assert "waited" in str(failed.value)
        assert store.write_trouble() is not None
    assert store.get_session("s1") is None  # nothing of it was written
    store.ensure_session("s1", project="p", cwd="/p")
    assert store.get_session("s1") is not None
    assert store.write_trouble() is None


def test_every_write_queued_behind_a_held_lock_gets_its_own_bounded_failure(store):
    """Writes queued while the writer waits for the lock fail each after its own wait, not
    one whole wait after another: all of them have failed while the lock is still held."""
    with locked_by_another_process(store.path):
        futures = []
        for n in range(6):
            futures.append(store.submit_events([event("s1", n)]))
            threading.Event().wait(LOCK_WAIT / 3)
        for future in futures:
            # Far beyond one bound; the wait of six writes one after another (and the old
            # 30 s wait of even one) would pass it.
            with pytest.raises(StoreUnavailable, match="locked by another process"):
                future.result(timeout=LOCK_WAIT * 5)
    assert store.stats().events == 0
    assert store.append_events([event("s1", 9)])[0].event_seq == 1


def test_every_kind_of_write_fails_as_unavailable_while_the_lock_is_held(store):
    with locked_by_another_process(store.path):
        writes = {
            "session": lambda: store.ensure_session("s1", project="p", cwd="/p"),
            "board": lambda: store.replace_board_rows([]),
            "job": lambda: store.enqueue_job("summarize", {"session": "s1"}),
            "documents": lambda: store.write_documents(cursor=("observations", 1)),
            "events": lambda: store.append_events([event("s1", 1)]),
        }
        for name, write in writes.items():
            try:
                write()
            except StoreUnavailable as exc:
                assert "locked by another process" in str(exc), name
            else:
                pytest.fail(f"the {name} write did not fail")


def test_a_full_disk_fails_writes_naming_it_and_they_resume_when_space_returns(tmp_path):
    with small_disk(tmp_path / "disk") as disk:
        store = SQLiteStore(disk / "memvault.db", lock_wait=LOCK_WAIT)
        try:
            store.append_events([event("s1", 0)])
            filler = fill(disk)
            big = {
                "tool_name": "Bash",
                "tool_input": {"command": "x"},
                "tool_output": "y" * 600_000,
            }
            with pytest.raises(StoreUnavailable) as failed:
                store.append_events([event("s1", 1, data=big)])
            assert str(failed.value) == (
                f"the disk holding {store.path} is full; nothing was written"
            )
            assert store.write_trouble() is not None
            assert store.stats().events == 1
            filler.unlink()
            assert store.write_trouble() is None  # health's small write passes again
            assert store.append_events([event("s1", 1, data=big)])[0].event_seq == 2
        finally:
            store.close()


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_database_file_deleted_or_replaced_under_the_store_refuses_writes_naming_it(
    tmp_path, how
):
    """Its connections would go on writing into a file nobody can open again (a deleted
    one lives on while it is open), and a new reader would start an empty database."""
    store = SQLiteStore(tmp_path / "memvault.db", lock_wait=LOCK_WAIT)
    try:
        store.ensure_session("s1", project="p", cwd="/p")
        for suffix in ("", "-wal", "-shm"):
            (tmp_path / f"memvault.db{suffix}").unlink(missing_ok=True)
        if how == "replaced":
            SQLiteStore(tmp_path / "memvault.db").close()  # another, empty database
        with pytest.raises(StoreUnavailable) as failed:
            store.ensure_session("s2", project="p", cwd="/p")
        said = f"the database {store.path} was {how} while memvault was running"
        assert said in str(failed.value) and "nothing was written" in str(failed.value)
        assert store.write_trouble() == str(failed.value)
        # A thread without a connection yet is not handed another (or a new, empty) file.
        read: list[BaseException] = []

        def reader():
            try:
                store.document_count()
            except BaseException as exc:  # kept to assert on
                read.append(exc)

        thread = threading.Thread(target=reader)
        thread.start()
        thread.join()
        assert [type(e) for e in read] == [StoreUnavailable]
        assert (tmp_path / "memvault.db").exists() == (how == "replaced")
    finally:
        store.close()


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_file_gone_between_the_check_and_the_open_is_never_opened_in_its_place(tmp_path, how):
    """The look at the file and the open are two steps: a deletion between them must not
    leave a new, empty database at the path (the next start would open it as the memory),
    nor a connection to another database put there meanwhile."""
    path = tmp_path / "memvault.db"
    store = SQLiteStore(path, lock_wait=LOCK_WAIT)
    looked = store._moved

    def look_then_remove():
        found = looked()  # the file is still the store's when it looks
        for suffix in ("", "-wal", "-shm"):
            (tmp_path / f"memvault.db{suffix}").unlink(missing_ok=True)
        if how == "replaced":
            SQLiteStore(path).close()  # another, empty database
        store._moved = looked
        return found

    try:
        store.ensure_session("s1", project="p", cwd="/p")
        store._moved = look_then_remove
        with pytest.raises(StoreUnavailable) as failed:
            store._connect()
        assert f"was {how} while memvault was running" in str(failed.value)
        assert path.exists() == (how == "replaced")
    finally:
        store._moved = looked
        store.close()
