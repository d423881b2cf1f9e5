"""The journaled bus: the in-process queues backed by the SQLite inbox and outbox.

``put_inbound`` returns only once a message is in the inbox (so a channel may then
acknowledge it to its platform), and ``put_outbound`` only once a reply is in the
outbox; :meth:`DurableBus.replay` re-queues what a previous run left unfinished.

Replicas sharing the store journal each other's chats' messages, and each polls for its
own (:mod:`bot.dispatcher.ownership`). Between its full reads (one per poll interval)
a poll reads only the inbox rows it has not read before: the pending ids alone first,
then the payloads of the new ones. Reading every pending row each time made a backlog
cost its size at every poll, and a busy replica polls back to back (every message
journaled wakes it), so 10,000 waiting messages were parsed again and again while they
waited. The outbox's unsent rows are read at the full reads alone: a replica queues the
replies it writes as it writes them, so what a poll finds there is another replica's (a
pairing approved from a chat it runs, say), and a platform outage that piles replies up
must not make every wake-up parse them all again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence

from bot.bus.base import InProcessBus
from bot.messages import ChatKey, InboundMessage, OutboundMessage
from bot.store.base import Inbox, Outbox

log = logging.getLogger(__name__)

Mark = tuple[ChatKey, str]  # a message: its chat and its id there


class DurableBus(InProcessBus):
    def __init__(
        self,
        inbox: Inbox,
        outbox: Outbox,
        max_inbound: int = 10_000,
        *,
        shared: bool = False,
        announce: Callable[[ChatKey], None] = lambda _key: None,
    ) -> None:
        super().__init__(max_inbound)
        self.inbox = inbox
        self.outbox = outbox
        # Shared by replicas: a message is only journaled here; the replica running its
        # chat reads it from the inbox, in the inbox's order (see requeue).
        self._shared = shared
        self.journaled = asyncio.Event()  # set when this replica journaled one
        self._announce = announce  # tells the replica running the chat (a wake-up hint)
        self.clock: Callable[[], float] = time.monotonic
        # The inbox rows read since the last full read (row id <-> chat and message id).
        self._read_in: dict[int, Mark] = {}
        self._row_of: dict[Mark, int] = {}
        self._full_at = float("-inf")
        # One read at a time: a partition gained reads its rows after a poll that did not
        # keep them, and a poll sorts its rows by the partitions held once it has them.
        self._reading = asyncio.Lock()

    async def put_inbound(self, msg: InboundMessage) -> None:
        if await self.inbox.accept(msg):
            if self._shared:
                self.journaled.set()
                self._announce(msg.key)
            else:
                await super().put_inbound(msg)
        else:
            log.info("message %s in %s already accepted; ignored", msg.message_id, msg.key)

    async def inbound_done(self, msg: InboundMessage) -> None:
        await self.inbox.done(msg)

    async def inbound_started(self, msg: InboundMessage) -> int:
        return await self.inbox.started(msg)

    async def inbound_failed(self, msg: InboundMessage) -> None:
        await self.inbox.failed(msg)

    async def inbound_interrupted(self, msgs: Sequence[InboundMessage]) -> None:
        await self.inbox.interrupted(msgs)

    async def put_outbound(self, msg: OutboundMessage) -> None:
        if await self.outbox.add(msg):
            await super().put_outbound(msg)
        else:
            log.info("delivery %s already queued or sent; not sent again", msg.delivery_key)

    async def put_outbound_many(self, msgs: list[OutboundMessage]) -> None:
        """One transaction for a batch (reminders due in the same second)."""
        for msg in await self.outbox.add_many(msgs):
            await super().put_outbound(msg)

    async def replay(self) -> tuple[int, int]:
        """Re-queue what a previous run accepted but did not finish; (inbound, outbound)."""
        return await self.requeue(lambda _key: True)

    async def requeue(
        self,
        keep: Callable[[ChatKey], bool],
        *,
        fresh_for: float | None = None,
        then: Callable[[], None] = lambda: None,
    ) -> tuple[int, int]:
        """Queue the unfinished messages and replies of the chats ``keep`` selects (a
        replica's partitions: taken over, or journaled by another replica); the
        dispatcher and the outbox claims drop what is already queued or being sent.
        ``fresh_for`` (a poll, whose ``keep`` is every partition held): within that many
        seconds of its last full read, only the messages it has not read since (and
        those :meth:`passed_over` gave back); it reads them all again once per its
        interval, however often journaled messages wake it. ``then`` runs once the
        messages are queued, before any other read: a partition gained joins the polled
        ones there, so no poll queues a message of it ahead of an older one that an
        earlier poll read (and left: the partition was another replica's)."""
        async with self._reading:  # a poll and a gained partition's read, one at a time
            now = self.clock()
            full = fresh_for is None or now - self._full_at >= fresh_for
            if fresh_for is None:  # not the poll's: what it read stays read
                unread = await self.inbox.pending()
            else:
                if full:
                    self._read_in.clear()
                    self._row_of.clear()
                    self._full_at = now
                unread = await self._unread()
            inbound = [m for m in unread if keep(m.key)]
            for msg in inbound:  # in the inbox's order, before the next read's
                await super().put_inbound(msg)
            then()
        # This replica queues its own replies as it writes them; the outbox is read for
        # the rest (another run's) at full reads only.
        pending = await self.outbox.due(pending_all=True) if full else []
        outbound = [m for m in pending if keep(m.key)]
        for out in outbound:
            await super().put_outbound(out)
        return len(inbound), len(outbound)

    async def _unread(self) -> list[InboundMessage]:
        """The pending messages not read since the last full read; those finished since
        are forgotten."""
        current = await self.inbox.pending_ids()
        fresh = [i for i in current if i not in self._read_in]
        rows = await self.inbox.read_pending(fresh)
        if len(self._read_in) > len(current) - len(fresh):  # some were finished since
            still = set(current)
            self._read_in = {i: m for i, m in self._read_in.items() if i in still}
            self._row_of = {m: i for i, m in self._read_in.items()}
        for row, msg in rows:
            mark = (msg.key, msg.message_id)
            self._read_in[row] = mark
            self._row_of[mark] = row
        return [msg for _, msg in rows]

    def passed_over(self, msg: InboundMessage) -> None:
        """The dispatcher did not take ``msg``: its chat is not run here right now (a
        lease a moment past its deadline, before the renewal). The next poll reads it
        again, before the messages after it, as if it had never been read."""
        row = self._row_of.pop((msg.key, msg.message_id), None)
        if row is not None:
            self._read_in.pop(row, None)
