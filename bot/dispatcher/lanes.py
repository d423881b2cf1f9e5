"""Serial per key, concurrent across keys: the pattern behind chat workers and senders.

Each key gets a task with its own queue, created on demand and reaped after ``idle_s``
without work; a semaphore caps how many items run at once across keys.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


class _Lane(Generic[T]):
    __slots__ = ("busy", "queue", "task")

    def __init__(self) -> None:
        self.queue: asyncio.Queue[T] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None
        self.busy = False


class KeyedSerial(Generic[K, T]):
    def __init__(
        self,
        handler: Callable[[T], Awaitable[None]],
        *,
        max_concurrent: int,
        idle_s: float,
        name: str = "lane",
    ) -> None:
        self._handler = handler
        self._slots = asyncio.Semaphore(max_concurrent)
        self._idle_s = idle_s
        self._name = name
        self._lanes: dict[K, _Lane[T]] = {}
        self.closing = False

    @property
    def lanes(self) -> int:
        return len(self._lanes)

    @property
    def busy(self) -> int:
        return sum(1 for lane in self._lanes.values() if lane.busy)

    def queued(self) -> int:
        return sum(lane.queue.qsize() for lane in self._lanes.values())

    def submit(self, key: K, item: T) -> None:
        lane = self._lanes.get(key)
        if lane is None:
            lane = _Lane[T]()
            self._lanes[key] = lane
            lane.task = asyncio.create_task(self._run(key, lane), name=f"{self._name}:{key}")
        lane.queue.put_nowait(item)

    async def _run(self, key: K, lane: _Lane[T]) -> None:
        while True:
            try:
                item = await self._next(lane.queue)
            except TimeoutError:
                if lane.queue.empty():
                    # No await between the check and the removal: a new item either
                    # landed before (queue not empty) or will create a fresh lane.
                    self._lanes.pop(key, None)
                    return
                continue
            lane.busy = True
            try:
                async with self._slots:
                    await self._handler(item)
            except asyncio.CancelledError:
                raise
            except Exception:  # the handler owns error reporting; the lane must live on
                log.exception("%s handler failed for %s", self._name, key)
            finally:
                lane.busy = False
                lane.queue.task_done()

    async def _next(self, queue: asyncio.Queue[T]) -> T:
        """The next item, or TimeoutError after ``idle_s`` without one. A queued item is
        taken at once; the wait uses a timer, not ``wait_for``, which wraps every get in
        a task of its own (a task and a timer per message on the busiest path)."""
        if not queue.empty():
            return queue.get_nowait()
        async with asyncio.timeout(self._idle_s):
            return await queue.get()

    async def cancel(self, keep: Callable[[K], bool]) -> None:
        """Cancel the lanes of the keys ``keep`` selects, queued items and all."""
        lanes = [(k, lane) for k, lane in self._lanes.items() if keep(k)]
        for key, lane in lanes:
            self._lanes.pop(key, None)
            if lane.task is not None:
                lane.task.cancel()
        # asyncio.wait, not ``suppress(CancelledError)`` around each await: that also
        # swallowed a cancellation of the caller (a lease tick given up on), which then
        # waited on for as long as a lane ran.
        tasks = [lane.task for _, lane in lanes if lane.task is not None]
        if tasks:
            await asyncio.wait(tasks)

    async def drain(self, timeout: float) -> bool:
        """Wait for every queued item; then cancel the lanes. True if all finished."""
        self.closing = True
        joins = [asyncio.ensure_future(lane.queue.join()) for lane in self._lanes.values()]
        done = True
        if joins:
            _, pending = await asyncio.wait(joins, timeout=timeout)
            done = not pending
            for p in pending:
                p.cancel()
        tasks = [lane.task for lane in self._lanes.values() if lane.task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._lanes.clear()
        return done
