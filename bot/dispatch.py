"""Per-chat workers: strict order within a chat, concurrency across chats.

Each ChatKey gets a worker task with its own queue, created on the first message and
reaped after ``idle_s`` without work. A semaphore caps how many turns run at once.
A turn that raises never kills its worker: the user gets an apology with an error id
and the log gets the traceback under the same id.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence

from bot.bus import Bus
from bot.messages import ChatKey, InboundMessage, OutboundKind, OutboundMessage, new_id

log = logging.getLogger(__name__)

TurnHandler = Callable[[InboundMessage], Awaitable[None]]
# A filter returns True to let the message through; it may reply on its own.
Filter = Callable[[InboundMessage], Awaitable[bool]]


class _Worker:
    def __init__(self, key: ChatKey) -> None:
        self.key = key
        self.queue: asyncio.Queue[InboundMessage] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None
        self.busy = False


class Dispatcher:
    def __init__(
        self,
        bus: Bus,
        handler: TurnHandler,
        *,
        max_concurrent: int = 64,
        idle_s: float = 300.0,
        filters: Sequence[Filter] = (),
    ) -> None:
        self._bus = bus
        self._handler = handler
        self._filters = list(filters)
        self._idle_s = idle_s
        self._slots = asyncio.Semaphore(max_concurrent)
        self._workers: dict[ChatKey, _Worker] = {}
        self._accepting = True

    @property
    def active_workers(self) -> int:
        return len(self._workers)

    @property
    def busy_workers(self) -> int:
        return sum(1 for w in self._workers.values() if w.busy)

    async def run(self) -> None:
        """Consume the inbound side of the bus until cancelled."""
        while True:
            msg = await self._bus.get_inbound()
            await self.submit(msg)

    async def submit(self, msg: InboundMessage) -> None:
        if not self._accepting:
            log.warning("dispatcher stopping; message %s for %s not taken", msg.message_id, msg.key)
            return
        for keep in self._filters:
            if not await keep(msg):
                return
        worker = self._workers.get(msg.key)
        if worker is None:
            worker = _Worker(msg.key)
            self._workers[msg.key] = worker
            worker.task = asyncio.create_task(self._work(worker), name=f"chat:{msg.key}")
        worker.queue.put_nowait(msg)

    async def _work(self, worker: _Worker) -> None:
        while True:
            try:
                msg = await asyncio.wait_for(worker.queue.get(), timeout=self._idle_s)
            except TimeoutError:
                if worker.queue.empty():
                    # No await between the check and the removal: a new message either
                    # landed before (queue not empty) or will create a fresh worker.
                    self._workers.pop(worker.key, None)
                    return
                continue
            worker.busy = True
            try:
                async with self._slots:
                    await self._run_turn(msg)
            finally:
                worker.busy = False
                worker.queue.task_done()
            if not self._accepting and worker.queue.empty():
                self._workers.pop(worker.key, None)
                return

    async def _run_turn(self, msg: InboundMessage) -> None:
        try:
            await self._handler(msg)
        except asyncio.CancelledError:
            raise
        except Exception:
            error_id = new_id()[:8]
            log.exception("turn failed in %s (error id %s)", msg.key, error_id)
            await self._bus.put_outbound(
                OutboundMessage(
                    key=msg.key,
                    text=(
                        "Sorry, something went wrong while handling that message "
                        f"(error id {error_id}). Please try again."
                    ),
                    kind=OutboundKind.ERROR,
                    reply_to=msg.message_id,
                )
            )

    async def drain(self, timeout: float) -> bool:
        """Stop taking messages and wait for queued turns; True if all finished in time."""
        self._accepting = False
        tasks = [w.task for w in self._workers.values() if w.task is not None]
        joins = [asyncio.create_task(w.queue.join()) for w in self._workers.values()]
        done = True
        if joins:
            _, pending = await asyncio.wait(joins, timeout=timeout)
            done = not pending
            for p in pending:
                p.cancel()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._workers.clear()
        return done


class Deduplicator:
    """Drops a message whose (chat, message id) was seen recently (platform redelivery)."""

    def __init__(self, capacity: int = 10_000) -> None:
        self._seen: OrderedDict[tuple[ChatKey, str], None] = OrderedDict()
        self._capacity = capacity

    async def __call__(self, msg: InboundMessage) -> bool:
        ident = (msg.key, msg.message_id)
        if ident in self._seen:
            log.info("duplicate message %s in %s dropped", msg.message_id, msg.key)
            return False
        self._seen[ident] = None
        if len(self._seen) > self._capacity:
            self._seen.popitem(last=False)
        return True
