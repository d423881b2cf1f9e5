"""The database thread (bot.store.worker): order, errors, cancellation, closing.

The store's behaviour over it is the contract suite's; these pin the hop itself, which
every statement of the daemon goes through."""

from __future__ import annotations

import asyncio
import functools
import gc
import sqlite3
import threading
import weakref
from pathlib import Path

import pytest

from bot.errors import StoreError
from bot.store.db import Database
from bot.store.transaction import transaction
from bot.store.worker import DatabaseThread
from tests.fakes.waiting import until


async def test_work_runs_off_the_loop_in_submission_order() -> None:
    worker = DatabaseThread(name="t")
    seen: list[int] = []
    loop_thread = threading.get_ident()

    def job(n: int) -> int:
        assert threading.get_ident() != loop_thread
        seen.append(n)
        return n * n

    results = await asyncio.gather(*(worker.submit(functools.partial(job, n)) for n in range(200)))
    worker.stop()
    assert seen == list(range(200))
    assert results == [n * n for n in range(200)]


async def test_an_error_reaches_the_caller_and_the_thread_keeps_serving() -> None:
    worker = DatabaseThread(name="t")

    def broken() -> None:
        raise sqlite3.IntegrityError("UNIQUE constraint failed")

    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
        await worker.submit(broken)
    with pytest.raises(RuntimeError, match="StopIteration"):
        await worker.submit(lambda: next(iter(())))
    assert await worker.submit(lambda: "still here") == "still here"
    worker.stop()


async def test_a_cancelled_caller_leaves_its_transaction_whole(tmp_path: Path) -> None:
    db = Database(tmp_path / "bot.db")
    await db.open()
    await db.execute("CREATE TABLE t (n INTEGER)")
    started, release = threading.Event(), threading.Event()

    def two_rows(c: sqlite3.Connection) -> None:
        with transaction(c):
            c.execute("INSERT INTO t VALUES (1)")
            started.set()
            release.wait(5)
            c.execute("INSERT INTO t VALUES (2)")

    task = asyncio.create_task(db.run(two_rows))
    assert await asyncio.to_thread(started.wait, 5)
    task.cancel()
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    rows = await db.fetchall("SELECT n FROM t ORDER BY n")
    assert [r[0] for r in rows] == [1, 2]
    await db.close()


async def test_a_closed_database_refuses_work_with_a_clear_error(tmp_path: Path) -> None:
    db = Database(tmp_path / "bot.db")
    await db.open()
    await db.execute("CREATE TABLE t (n INTEGER)")
    await db.close()
    with pytest.raises(StoreError, match="not open"):
        await db.fetchall("SELECT 1")
    worker = DatabaseThread(name="t")
    worker.stop()
    with pytest.raises(StoreError, match="closed"):
        worker.submit(lambda: None)


async def test_results_that_finish_together_each_reach_their_caller() -> None:
    """Hand-backs coalesce while the loop is busy; none may be lost or swapped."""
    worker = DatabaseThread(name="t")
    futures = [worker.submit(functools.partial(int, n)) for n in range(500)]
    finished = threading.Event()
    worker.submit(finished.set)
    assert finished.wait(5)  # the loop is held here, so all 500 finish before it runs
    assert await asyncio.gather(*futures) == list(range(500))
    worker.stop()


async def test_a_finished_job_is_let_go_before_the_next_one_comes() -> None:
    """The thread keeps no reference to the last job: a batch of rows handed to it is
    freed when its statement is done, not when the next statement arrives."""

    class Batch:
        pass

    worker = DatabaseThread(name="t")
    batch = Batch()
    gone = weakref.ref(batch)
    await worker.submit(functools.partial(id, batch))
    del batch
    # The caller may wake a moment before the thread's loop moves on from the job: wait
    # for it (no other job is sent meanwhile, which would also let it go).
    await until(lambda: gc.collect() >= 0 and gone() is None, timeout=5)
    worker.stop()


def test_one_database_serves_loops_run_one_after_another(tmp_path: Path) -> None:
    """A CLI may open the database in one ``asyncio.run`` and use it in the next."""
    db = Database(tmp_path / "bot.db")

    async def first() -> None:
        await db.open()
        await db.execute("CREATE TABLE t (n INTEGER)")
        await db.execute("INSERT INTO t VALUES (1)")

    async def second() -> list[int]:
        rows = await asyncio.wait_for(db.fetchall("SELECT n FROM t"), 5)
        await db.close()
        return [int(r[0]) for r in rows]

    asyncio.run(first())
    assert asyncio.run(second()) == [1]


async def test_a_dead_database_thread_fails_every_caller_instead_of_hanging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Only a failure of the hand-back itself can end the thread early; when it does, the
    caller being answered, those queued behind it and every later one hear why, and the
    health probe reports the database down, instead of each waiting forever."""
    db = Database(tmp_path / "bot.db")
    await db.open()
    started, release = threading.Event(), threading.Event()

    def hold(_: sqlite3.Connection) -> str:
        started.set()
        release.wait(5)
        return "held"

    def broken(self: DatabaseThread, outcome: object) -> None:
        raise MemoryError("no room to hand the result back")

    first = asyncio.ensure_future(db.run(hold))
    assert await asyncio.to_thread(started.wait, 5)
    queued = asyncio.ensure_future(db.fetchall("SELECT 1"))
    await asyncio.sleep(0)  # queued behind the held job
    monkeypatch.setattr(DatabaseThread, "_hand_back", broken)
    release.set()
    for caller in (first, queued):
        with pytest.raises(StoreError, match="database thread died: MemoryError"):
            await asyncio.wait_for(caller, 5)
    with pytest.raises(StoreError, match="died"):
        await db.fetchall("SELECT 1")
    assert await asyncio.wait_for(db.writable(), 5) is False
    assert "the database thread died" in caplog.text
    monkeypatch.undo()
    await asyncio.wait_for(db.close(), 5)
