"""The database thread: runs work in order off the event loop and hands results back.

``loop.run_in_executor`` costs about 90 µs of CPU per round trip on the bench machine:
a concurrent Future, a work item, the pool's thread accounting, then a second Future
chained to an asyncio one. A turn makes about ten trips, so that was about a tenth of a
turn's CPU. This hop is a queue put and at most one ``call_soon_threadsafe``, about
40 µs; results that finish before the loop has run the previous hand-back ride along
with it. It is the shape aiosqlite uses, but aiosqlite hops once per cursor call
(execute, fetch, commit) and has no public way to run a whole transaction in one hop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from bot.errors import StoreError

log = logging.getLogger(__name__)

T = TypeVar("T")

_Job = tuple["asyncio.Future[Any]", Callable[[], Any]]
_Outcome = tuple["asyncio.Future[Any]", Any, BaseException | None]


class DatabaseThread:
    """One thread that runs callables one at a time in submission order.

    Each result goes back to the loop its caller awaits on (a CLI may run several loops
    one after another on one database). A caller cancelled while its work runs does not
    stop the work (a transaction always finishes or rolls back whole); the result is
    dropped.
    """

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        # Results waiting for their loop to run the hand-back already scheduled on it.
        self._done: dict[asyncio.AbstractEventLoop, list[_Outcome]] = {}
        self._stopped = False
        self.cause: str | None = None  # why the thread died, if it did
        self._handing: asyncio.Future[Any] | None = None
        # A daemon thread: a database left open never holds up the interpreter's exit,
        # and SQLite rolls back a transaction that a dying process cut short.
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def submit(self, work: Callable[[], T]) -> asyncio.Future[T]:
        """Queue ``work``; the future resolves on the owning loop with its result."""
        if self.cause is not None:  # a new error each time: one raised again and again
            raise StoreError(self.cause)  # would grow its traceback without end
        if self._stopped:
            raise StoreError("database is closed")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._jobs.put((future, work))
        if self.cause is not None:  # died while this was being queued: nobody will run it
            raise StoreError(self.cause)
        return future

    def stop(self) -> None:
        """Let the thread finish what is queued, then end; later submits fail."""
        if not self._stopped:
            self._stopped = True
            self._jobs.put(None)

    def _serve(self) -> None:
        try:
            while self._run_next():
                pass
        except BaseException as exc:  # only a failure of the hand-back itself gets here
            log.critical("the database thread died; every database call fails now", exc_info=True)
            self._die(exc)

    def _die(self, cause: BaseException) -> None:
        """Refuse new work and fail what is queued, so no caller waits for an answer that
        can never come (each sees why, and ``/healthz`` reports the database down)."""
        self._stopped = True
        self.cause = f"the database thread died: {cause!r}"
        waiting = [self._handing] if self._handing is not None else []
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            if job is not None:
                waiting.append(job[0])
        for future in waiting:
            with contextlib.suppress(BaseException):  # e.g. its loop is closed
                future.get_loop().call_soon_threadsafe(
                    resolve, future, None, StoreError(self.cause)
                )

    def _run_next(self) -> bool:
        """Run one job; False at the stop sentinel. A function of its own so the job (its
        closure may hold a large batch of rows) is let go when it ends, not when the next
        job arrives."""
        job = self._jobs.get()
        if job is None:
            return False
        future, work = job
        try:
            outcome: _Outcome = (future, work(), None)
        except StopIteration as exc:  # a future cannot hold one
            outcome = (future, None, RuntimeError(f"database work raised {exc!r}"))
        except BaseException as exc:  # handed to the caller, who re-raises it
            outcome = (future, None, exc)
        self._handing = future  # if the hand-back itself fails, this caller still hears
        self._hand_back(outcome)
        self._handing = None
        return True

    def _hand_back(self, outcome: _Outcome) -> None:
        loop = outcome[0].get_loop()
        with self._lock:
            waiting = self._done.get(loop)
            if waiting is not None:  # a hand-back is scheduled on that loop: ride along
                waiting.append(outcome)
                return
            self._done[loop] = [outcome]
        try:
            loop.call_soon_threadsafe(self._settle, loop)
        except RuntimeError:  # the loop is closed: nobody is left to wait
            log.debug("database result dropped: its event loop is closed")
            with self._lock:
                self._done.pop(loop, None)

    def _settle(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            done = self._done.pop(loop, [])
        for future, result, exc in done:
            resolve(future, result, exc)


def resolve(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    """Give ``future`` its result, or ``error`` when there is one; a future already done
    (its caller was cancelled) is left as it is."""
    if future.done():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)
