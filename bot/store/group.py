"""Group commit: writes that arrive while the database thread is busy share one commit.

The inbox journal is the one fsynced commit of a turn (a platform is acknowledged after
it), about 0.3 ms of wall time and 0.14 ms of CPU each on the bench machine and several
milliseconds on a disk without a write cache. A burst of a thousand messages paid a
thousand of them, one after another on the one database thread. Here the first write
of a group queues one job; every write submitted before that job starts rides along in
the same transaction, so the group costs one fsync and one hop, and a lone write costs
what it did before. Each writer still gets its own result, in submission order; when
the shared transaction fails, each write is retried in its own, so one bad row fails
only its own writer.

``Database.run_together`` is the same for the small writes and reads of a turn (its
attempt count, the facts it reads, its session rows, the reply's outbox row, the
message marked done). With chats in flight, a turn made about eight trips of its own;
shared, the bench's chats make about two per message, and each message costs about a
fifth less CPU: every trip woke both the database thread and the event loop.

Those small pieces need no trip at all while the database thread is idle: a group made
with ``here=True`` collects what is submitted during one pass of the event loop and then
runs it on the loop's own thread, in one transaction (``Database.try_here``). A commit
there is never fsynced (``synchronous=NORMAL`` in WAL mode writes the log and returns;
checkpoints run on the database thread), so it costs what the statements cost, without
the two thread wake-ups and the hand-overs of the GIL a trip makes. While the thread
holds the connection (an fsynced journal commit, a long read), the pieces wait, with
those of later passes, until it lets go, and then run here: the loop never blocks on
it, and the thread never runs them either (there each statement waits for the GIL the
busy loop holds, which kept the connection taken and sent the next pass there too).
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from bot.store.transaction import transaction
from bot.store.worker import resolve

P = TypeVar("P")
R = TypeVar("R")
T = TypeVar("T")


class Database(Protocol):
    """What a group needs of :class:`bot.store.db.Database` (which holds groups of its
    own, so this module does not import it)."""

    def submit(self, work: Callable[[sqlite3.Connection], T]) -> asyncio.Future[T]: ...

    def try_here(self, work: Callable[[sqlite3.Connection], T]) -> tuple[T] | None: ...

    def when_idle(self, loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> None: ...


@dataclass(eq=False)
class _Group(Generic[P, R]):
    loop: asyncio.AbstractEventLoop
    items: list[P] = field(default_factory=list)
    waiters: list[asyncio.Future[R]] = field(default_factory=list)
    sealed: bool = False  # set as the group's job starts (or cannot be queued)


_Outcome = tuple[Any, BaseException | None]


class GroupCommit(Generic[P, R]):
    """``await submit(item)`` runs ``write(connection, item)`` inside a transaction that
    every item submitted before the database thread reached it shares (``here``: every
    item submitted in the same pass of the event loop, run on the loop's thread)."""

    def __init__(
        self,
        db: Database,
        write: Callable[[sqlite3.Connection, P], R],
        *,
        durable: bool,
        here: bool = False,
    ) -> None:
        self._db = db
        self._write = write
        self._durable = durable
        self._here = here and not durable  # an fsync never runs on the loop's thread
        self._lock = threading.Lock()  # the loop appends, the database thread seals
        self._open: _Group[P, R] | None = None
        self._pass: _Group[P, R] | None = None  # collecting this pass of the loop
        self._waiting: _Group[P, R] | None = None  # for the database thread to go idle
        # The loop that asked to be called when it does (a CLI may run several loops one
        # after another on one database; a closed loop's call never comes).
        self._called: asyncio.AbstractEventLoop | None = None

    async def submit(self, item: P) -> R:
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[R] = loop.create_future()
        if self._here:
            group = self._pass
            if group is None or group.loop is not loop:
                group = self._pass = _Group(loop)
                loop.call_soon(self._run_pass, group)
            group.items.append(item)
            group.waiters.append(waiter)
        else:
            self._to_thread(loop, [item], [waiter])
        return await waiter

    def _to_thread(
        self, loop: asyncio.AbstractEventLoop, items: list[P], waiters: list[asyncio.Future[R]]
    ) -> None:
        """Join the group waiting for the database thread, or queue a new one."""
        with self._lock:
            group = self._open
            fresh = group is None or group.sealed or group.loop is not loop
            if fresh:
                group = self._open = _Group(loop)
            assert group is not None
            group.items.extend(items)
            group.waiters.extend(waiters)
        if not fresh:
            return
        try:
            job = self._db.submit(functools.partial(self._commit, group=group))
        except Exception as exc:  # e.g. the database is closed: no job will seal it
            self._seal(group)
            self._settle(group, [(None, exc)] * len(group.waiters))
        else:
            # A callback, not a writer's await: a writer cancelled while it waits must
            # not strand the others of its group.
            job.add_done_callback(functools.partial(self._answer, group))

    def _run_pass(self, group: _Group[P, R]) -> None:
        """The pieces of one pass of the loop, with any still waiting for the database
        thread to go idle: run here now if it is, else they wait for it (a callback:
        every waiter is answered, whatever happens)."""
        if self._pass is group:
            self._pass = None
        waiting = self._waiting
        if waiting is not None and waiting.loop is group.loop:
            waiting.items.extend(group.items)
            waiting.waiters.extend(group.waiters)
            group = waiting
        elif waiting is not None:  # left by a loop that has closed: nobody awaits it
            self._waiting = None
        self._attempt(group)

    def _attempt(self, group: _Group[P, R]) -> None:
        try:
            ran = self._db.try_here(functools.partial(self._commit, group=group))
        except Exception as exc:  # closed, or the thread died: every piece hears why
            ran = ([(None, exc)] * len(group.waiters),)
        if ran is None:  # the thread holds the connection: wait until it lets go
            self._waiting = group
            if self._called is not group.loop:
                self._called = group.loop
                self._db.when_idle(group.loop, self._on_idle)
            return
        if self._waiting is group:
            self._waiting = None
        self._settle(group, ran[0])

    def _on_idle(self) -> None:
        self._called = None
        waiting = self._waiting
        if waiting is not None and waiting.loop is asyncio.get_running_loop():
            self._attempt(waiting)

    def _seal(self, group: _Group[P, R]) -> None:
        """No item joins ``group`` any more; the next one starts a new group."""
        with self._lock:
            group.sealed = True
            if self._open is group:
                self._open = None

    def _answer(self, group: _Group[P, R], job: asyncio.Future[list[_Outcome]]) -> None:
        if job.cancelled():  # only a loop shutting down cancels it: so are its writers
            for waiter in group.waiters:
                waiter.cancel()
            return
        if (exc := job.exception()) is not None:
            outcomes: list[_Outcome] = [(None, exc)] * len(group.waiters)
        else:
            outcomes = job.result()
        self._settle(group, outcomes)

    @staticmethod
    def _settle(group: _Group[P, R], outcomes: list[_Outcome]) -> None:
        for waiter, (result, error) in zip(group.waiters, outcomes, strict=True):
            resolve(waiter, result, error)

    def _commit(self, conn: sqlite3.Connection, group: _Group[P, R]) -> list[_Outcome]:
        """Whichever thread holds the connection: seal the group, then write it whole in
        one transaction."""
        self._seal(group)
        items = list(group.items)
        try:
            with transaction(conn, durable=self._durable):
                return [(self._write(conn, item), None) for item in items]
        except Exception:  # one item's failure (a constraint, a bug) must not fail the rest
            if len(items) == 1:
                raise
        return [self._alone(conn, item) for item in items]

    def _alone(self, conn: sqlite3.Connection, item: P) -> _Outcome:
        try:
            with transaction(conn, durable=self._durable):
                return self._write(conn, item), None
        except Exception as exc:
            return None, exc
