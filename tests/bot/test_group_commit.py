"""Group commit (bot.store.group): writes queued while the database thread is busy share
one transaction and one fsync, and each writer still gets its own answer.

The database thread is held busy by a job that waits on an event, so what queues behind
it is known exactly; the commits are read from SQLite's own statement trace."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from functools import partial
from pathlib import Path
from typing import Any

import pytest

import bot.store.db as db_module
from bot.errors import StoreError
from bot.messages import ChatKey, InboundMessage
from bot.store.db import Database
from bot.store.group import GroupCommit
from bot.store.inbox import InboxStore

KEY = ChatKey("test", "c1")


class Busy:
    """Holds the database thread until released, so writes queue behind it."""

    def __init__(self, db: Database) -> None:
        self.started, self.release = threading.Event(), threading.Event()
        self.task = asyncio.ensure_future(db.run(self._hold))

    def _hold(self, _: sqlite3.Connection) -> None:
        self.started.set()
        self.release.wait(10)

    async def __aenter__(self) -> Busy:
        assert await asyncio.to_thread(self.started.wait, 10)
        return self

    async def __aexit__(self, *_: object) -> None:
        self.release.set()
        await self.task


async def _trace(db: Database) -> list[str]:
    trace: list[str] = []
    await db.run(lambda c: c.set_trace_callback(trace.append))
    return trace


def _msg(n: int) -> InboundMessage:
    return InboundMessage(KEY, "u1", f"message {n}", message_id=f"m{n}")


async def _settled(tasks: list[asyncio.Task[bool]]) -> None:
    await asyncio.wait_for(asyncio.wait(tasks), 10)


async def test_messages_arriving_together_share_one_fsynced_commit(db: Database) -> None:
    inbox = InboxStore(db)
    trace = await _trace(db)
    async with Busy(db):
        accepts = [asyncio.ensure_future(inbox.accept(_msg(n))) for n in range(100)]
        accepts.append(asyncio.ensure_future(inbox.accept(_msg(7))))  # a redelivery
        await asyncio.sleep(0)  # every accept has queued (none can finish: the thread is held)
        assert not any(a.done() for a in accepts)
    await _settled(accepts)
    assert [a.result() for a in accepts] == [True] * 100 + [False]
    assert trace.count("PRAGMA synchronous=FULL") == 1
    assert sum(sql.startswith("INSERT OR IGNORE INTO inbox") for sql in trace) == 101
    # The journal keeps arrival order: a restart replays them as they came.
    assert [m.text for m in await inbox.pending()] == [f"message {n}" for n in range(100)]


async def test_a_lone_message_still_commits_at_once(db: Database) -> None:
    inbox = InboxStore(db)
    trace = await _trace(db)
    for n in range(3):
        assert await inbox.accept(_msg(n))
    assert trace.count("PRAGMA synchronous=FULL") == 3
    assert await inbox.accept(_msg(1)) is False


async def test_one_bad_row_fails_only_its_own_writer(db: Database) -> None:
    await db.execute("CREATE TABLE t (n INTEGER CHECK (n > 0))")
    group: GroupCommit[int, int] = GroupCommit(
        db, lambda c, n: c.execute("INSERT INTO t VALUES (?)", (n,)).rowcount, durable=False
    )
    async with Busy(db):
        writes = [asyncio.ensure_future(group.submit(n)) for n in (1, -1, 2)]
        await asyncio.sleep(0)
    await asyncio.wait_for(asyncio.wait(writes), 10)
    assert writes[0].result() == 1 and writes[2].result() == 1
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        writes[1].result()
    assert [r[0] for r in await db.fetchall("SELECT n FROM t ORDER BY rowid")] == [1, 2]


async def test_a_lone_bad_row_raises_as_a_single_write_would(db: Database) -> None:
    await db.execute("CREATE TABLE t (n INTEGER CHECK (n > 0))")
    group: GroupCommit[int, int] = GroupCommit(
        db, lambda c, n: c.execute("INSERT INTO t VALUES (?)", (n,)).rowcount, durable=False
    )
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        await group.submit(-1)
    assert await group.submit(3) == 1


async def test_a_cancelled_writer_strands_no_one_else(db: Database) -> None:
    inbox = InboxStore(db)
    async with Busy(db):
        accepts = [asyncio.ensure_future(inbox.accept(_msg(n))) for n in range(3)]
        await asyncio.sleep(0)
        accepts[0].cancel()  # the one whose write queued the group's job
    await asyncio.wait_for(asyncio.wait(accepts), 10)
    assert accepts[0].cancelled()
    assert accepts[1].result() is True and accepts[2].result() is True
    # Its write was already queued: like any cancelled caller's, it still happened whole.
    assert len(await inbox.pending()) == 3


async def test_a_closed_database_answers_every_writer_with_a_clear_error(
    db: Database,
) -> None:
    inbox = InboxStore(db)
    await db.close()
    for n in (1, 2):  # the second is refused too, never left waiting on the first's group
        with pytest.raises(StoreError, match="not open"):
            await asyncio.wait_for(inbox.accept(_msg(n)), 10)


# ------------------------------------------------------------------ Database.run_together


async def test_small_pieces_waiting_for_a_busy_thread_share_one_commit_on_the_loop(
    db: Database,
) -> None:
    """A turn's bookkeeping from many chats at once (attempt counts, outbox rows, finished
    messages, session rows) rides in one transaction; each caller gets its own answer.
    While the database thread holds the connection the pieces wait, and then run on the
    event loop's thread: no trip to the database thread at all."""
    await db.execute("CREATE TABLE t (n INTEGER)")
    trace = await _trace(db)
    trips: list[object] = []
    submit = db.submit

    def counted(work):  # type: ignore[no-untyped-def]
        trips.append(work)
        return submit(work)

    threads: set[str] = set()

    def insert(c: sqlite3.Connection, n: int) -> int:
        threads.add(threading.current_thread().name)
        return int(c.execute(_INSERT_T, (n,)).rowcount)

    async with Busy(db):
        db.submit = counted  # type: ignore[method-assign]
        writes = [asyncio.ensure_future(db.run_together(partial(insert, n=n))) for n in range(20)]
        reads = [
            asyncio.ensure_future(db.run_together(lambda c: c.execute(_COUNT_T).fetchone()[0]))
        ]
        for _ in range(3):
            await asyncio.sleep(0)
        assert not any(w.done() for w in writes)  # the connection is taken: they wait
    await asyncio.wait_for(asyncio.gather(*writes, *reads), 10)
    assert [w.result() for w in writes] == [1] * 20
    assert reads[0].result() == 20  # in submission order, inside the same transaction
    assert trips == [] and threads == {threading.current_thread().name}
    assert trace.count("BEGIN") == 1 and trace.count("COMMIT") == 1


async def test_small_pieces_run_on_the_loop_thread_while_the_database_thread_is_idle(
    db: Database,
) -> None:
    trips: list[object] = []
    submit = db.submit

    def counted(work):  # type: ignore[no-untyped-def]
        trips.append(work)
        return submit(work)

    db.submit = counted  # type: ignore[method-assign]
    names = await asyncio.gather(
        *(db.run_together(lambda _c: threading.current_thread().name) for _ in range(5))
    )
    assert set(names) == {threading.current_thread().name} and trips == []


async def test_checkpoints_run_on_the_database_thread_never_on_the_loop(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite's automatic checkpoint (an fsync) would run in whichever thread commits, the
    loop's included: it is off, and every CHECKPOINT_EVERY operations the database thread
    checkpoints instead, so the write-ahead log stays short."""
    monkeypatch.setattr(db_module, "CHECKPOINT_EVERY", 10)
    await db.execute("CREATE TABLE t (n INTEGER)")
    seen: list[tuple[str, str]] = []
    await db.run(
        lambda c: c.set_trace_callback(
            lambda sql: seen.append((threading.current_thread().name, sql))
        )
    )
    for n in range(40):
        await db.run_together(partial(_insert_n, n=n))
    await db.run(lambda _c: None)  # a checkpoint already queued has run by now
    checkpoints = [name for name, sql in seen if "wal_checkpoint" in sql]
    commits_here = [name for name, sql in seen if sql == "COMMIT"]
    assert len(checkpoints) >= 3 and set(checkpoints) == {"sqlite"}
    assert threading.current_thread().name in set(commits_here)
    rows = await db.fetchall("PRAGMA wal_autocheckpoint")
    assert rows[0][0] == 0


async def test_pieces_waiting_for_the_connection_fail_clearly_when_the_database_closes(
    tmp_path: Path,
) -> None:
    db = Database(tmp_path / "bot.db")
    await db.open()
    busy = Busy(db)
    async with busy:
        waiting = asyncio.ensure_future(db.run_together(lambda c: c.execute("SELECT 1")))
        await asyncio.sleep(0)
        closing = asyncio.ensure_future(db.close())
        with pytest.raises(StoreError, match="not open"):
            await asyncio.wait_for(waiting, 10)
    await asyncio.wait_for(closing, 10)


def _insert_n(c: sqlite3.Connection, n: int) -> None:
    c.execute(_INSERT_T, (n,))


async def test_a_failing_piece_is_undone_and_fails_only_its_caller(db: Database) -> None:
    await db.execute("CREATE TABLE t (n INTEGER)")

    def half_then_fail(c: sqlite3.Connection) -> None:
        c.execute(_INSERT_T, (100,))
        raise KeyError("a bug in this piece")  # not an sqlite error: still only its own

    async with Busy(db):
        before = asyncio.ensure_future(db.run_together(lambda c: c.execute(_INSERT_T, (1,))))
        bad = asyncio.ensure_future(db.run_together(half_then_fail))
        after = asyncio.ensure_future(db.run_together(lambda c: c.execute(_INSERT_T, (2,))))
        await asyncio.sleep(0)
    await asyncio.wait_for(asyncio.wait([before, bad, after]), 10)
    assert before.exception() is None and after.exception() is None
    with pytest.raises(KeyError, match="a bug in this piece"):
        bad.result()
    rows = await db.fetchall("SELECT n FROM t ORDER BY n")
    assert [r["n"] for r in rows] == [1, 2]  # the failed piece's own row is rolled back
    with pytest.raises(KeyError):  # alone, it raises as any database work does
        await db.run_together(half_then_fail)
    assert len(await db.fetchall("SELECT n FROM t")) == 2


_INSERT_T = "INSERT INTO t (n) VALUES (?)"
_COUNT_T = "SELECT count(*) FROM t"


def test_pieces_left_waiting_by_a_closed_loop_do_not_hold_up_the_next_one(
    tmp_path: Path,
) -> None:
    """A CLI may run several loops one after another on one database. Pieces that were
    waiting for the database thread when their loop closed are let go, and the next
    loop's pieces are still called back once the thread lets go of the connection."""
    db = Database(tmp_path / "bot.db")

    async def hold_and_wait(started: threading.Event, release: threading.Event) -> Any:
        def hold(_c: sqlite3.Connection) -> None:
            started.set()
            release.wait(10)

        holder = asyncio.ensure_future(db.run(hold))
        assert await asyncio.to_thread(started.wait, 10)
        piece = asyncio.ensure_future(db.run_together(lambda c: c.execute(_INSERT_T, (1,))))
        for _ in range(3):
            await asyncio.sleep(0)
        assert not piece.done()  # waiting for the connection
        return holder, piece

    first_release = threading.Event()

    async def first() -> None:
        await db.open()
        await db.execute("CREATE TABLE t (n INTEGER)")
        await hold_and_wait(threading.Event(), first_release)  # the loop ends; they wait

    async def second() -> int:
        release = threading.Event()
        holder, piece = await hold_and_wait(threading.Event(), release)
        release.set()
        await asyncio.wait_for(asyncio.gather(holder, piece), 10)
        count = await db.fetchall(_COUNT_T)
        await db.close()
        return int(count[0][0])

    asyncio.run(first())
    first_release.set()
    assert asyncio.run(second()) == 1
