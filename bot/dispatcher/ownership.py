"""A replica's chats follow its partition leases (:mod:`bot.cluster`).

A partition gained is read from the shared inbox and outbox at once (a dead replica's
unanswered messages and unsent replies; those it was sending are looked up before they
are posted again); one lost has its turns cancelled here (their writes would be refused
anyway); every ``poll_s`` the held partitions are read again for messages other
replicas journaled (at once for those this one journaled). Single
leases (a platform poller) start and stop what the composition root tied to them.
Reminders: the timer is refilled, so the chats' due ones fire here.
Idle means no turn queued or running and no reply being sent or unmarked, so a
partition handed to a newcomer never splits a chat's turns across two replicas, and the
newcomer's claim never takes a reply this one is still sending.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping

from bot.bus.durable import DurableBus
from bot.cluster.partitions import partition_in, partition_of
from bot.dispatcher.dispatcher import Dispatcher
from bot.messages import ChatKey

log = logging.getLogger(__name__)

Toggle = Callable[[bool], Awaitable[None]]  # a single lease's work, started or stopped


class ChatOwnership:
    """The daemon's :class:`~bot.cluster.base.LeaseEvents`."""

    def __init__(
        self,
        bus: DurableBus,
        dispatcher: Dispatcher,
        *,
        partitions: int,
        poll_s: float,
        singles: Mapping[str, Toggle] | None = None,
        refill: Callable[[], Awaitable[None]] | None = None,
        settled: Callable[[Callable[[ChatKey], bool]], bool] = lambda _keep: True,
        in_doubt: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        # Delivery: no reply of these chats being sent or not yet marked sent here.
        self._settled = settled
        # The reminder timer, refilled from the table when chats come: theirs fire here.
        self._refill = refill
        # Delivery reads the rows another run was sending before they are queued here,
        # so each is looked up before it is posted again (Delivery.look_up_in_doubt).
        self._in_doubt = in_doubt
        self._bus = bus
        self._dispatcher = dispatcher
        self._count = partitions
        self._poll_s = poll_s
        self._singles = dict(singles or {})
        self._held: set[int] = set()
        self._poller: asyncio.Task[None] | None = None

    def _in(self, partitions: set[int]) -> Callable[[ChatKey], bool]:
        return lambda key: partition_of(key, self._count) in partitions

    def _runs_here(self, key: ChatKey) -> bool:
        """The held partitions as they are when a poll's rows are sorted, not when it
        began: a partition gained meanwhile reads its rows after the poll."""
        return partition_of(key, self._count) in self._held

    async def _partition(self, lease: str, held: bool) -> int | None:
        """The partition ``lease`` stands for; for a single lease, None once its work
        was started (``held``) or stopped."""
        part = partition_in(lease)
        if part is None and lease in self._singles:
            await self._singles[lease](held)
        return part

    async def gained(self, lease: str) -> None:
        part = await self._partition(lease, held=True)
        if part is None:
            return
        if self._poller is None:
            self._poller = asyncio.create_task(self._poll(), name="cluster-poll")
        # Polled only from the read of all its rows on: a poll meanwhile reads just the
        # rows it has not read, and an earlier one read (and left) the older ones.
        try:
            if self._in_doubt is not None:
                await self._in_doubt()
            inbound, outbound = await self._bus.requeue(
                self._in({part}), then=lambda: self._held.add(part)
            )
        except Exception:
            self._held.add(part)  # its rows come with the next full poll
            raise
        if inbound or outbound:
            log.info("%s: %d unanswered messages, %d unsent replies", lease, inbound, outbound)
        if self._refill is not None:
            await self._refill()

    async def lost(self, lease: str) -> None:
        part = await self._partition(lease, held=False)
        if part is not None:
            self._held.discard(part)
            await self._dispatcher.forsake(self._in({part}))

    def woken(self, lease: str) -> None:
        """Another replica journaled a message for one of these chats: read at once."""
        self._bus.journaled.set()

    def idle(self, lease: str) -> bool:
        part = partition_in(lease)
        if part is None:
            return True
        keep = self._in({part})
        return self._dispatcher.idle(keep) and self._settled(keep)

    async def _poll(self) -> None:
        """Read the held partitions' new rows: at once when this replica journaled one,
        else every ``poll_s`` (what another replica journaled)."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._bus.journaled.wait(), self._poll_s)
            self._bus.journaled.clear()
            if self._held:
                try:
                    await self._bus.requeue(self._runs_here, fresh_for=self._poll_s)
                except Exception as exc:  # the next poll tries again
                    log.warning("reading the shared inbox failed: %s", exc)

    async def stop(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poller
