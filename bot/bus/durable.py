"""The message bus between channel adapters and the agent.

Adapters only normalize and ``put_inbound``; the dispatcher consumes inbound messages
and the delivery side consumes outbound ones. The interface is small so a networked bus
(Redis Streams partitioned by ChatKey) can replace the in-process one.

:class:`DurableBus` journals both sides in SQLite: ``put_inbound`` returns only once a
message is in the inbox (so a channel may then acknowledge it to its platform), and
``put_outbound`` only once a reply is in the outbox.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from bot.messages import InboundMessage, OutboundMessage
from bot.store.inbox import InboxStore
from bot.store.outbox import OutboxStore

log = logging.getLogger(__name__)


class Bus(Protocol):
    async def put_inbound(self, msg: InboundMessage) -> None: ...
    async def get_inbound(self) -> InboundMessage: ...
    async def inbound_done(self, msg: InboundMessage) -> None: ...
    async def put_outbound(self, msg: OutboundMessage) -> None: ...
    async def put_outbound_many(self, msgs: list[OutboundMessage]) -> None: ...
    async def get_outbound(self) -> OutboundMessage: ...
    def inbound_depth(self) -> int: ...
    def outbound_depth(self) -> int: ...


class InProcessBus:
    """Two asyncio queues. The bounded inbound side gives back-pressure to adapters."""

    def __init__(self, max_inbound: int = 10_000) -> None:
        self._inbound: asyncio.Queue[InboundMessage] = asyncio.Queue(max_inbound)
        self._outbound: asyncio.Queue[OutboundMessage] = asyncio.Queue()

    async def put_inbound(self, msg: InboundMessage) -> None:
        await self._inbound.put(msg)

    async def get_inbound(self) -> InboundMessage:
        return await self._inbound.get()

    async def inbound_done(self, msg: InboundMessage) -> None:
        return None

    async def put_outbound(self, msg: OutboundMessage) -> None:
        await self._outbound.put(msg)

    async def put_outbound_many(self, msgs: list[OutboundMessage]) -> None:
        for msg in msgs:
            await self.put_outbound(msg)

    async def get_outbound(self) -> OutboundMessage:
        return await self._outbound.get()

    def inbound_depth(self) -> int:
        return self._inbound.qsize()

    def outbound_depth(self) -> int:
        return self._outbound.qsize()


class DurableBus(InProcessBus):
    def __init__(self, inbox: InboxStore, outbox: OutboxStore, max_inbound: int = 10_000) -> None:
        super().__init__(max_inbound)
        self.inbox = inbox
        self.outbox = outbox

    async def put_inbound(self, msg: InboundMessage) -> None:
        if await self.inbox.accept(msg):
            await super().put_inbound(msg)
        else:
            log.info("message %s in %s already accepted; ignored", msg.message_id, msg.key)

    async def inbound_done(self, msg: InboundMessage) -> None:
        await self.inbox.done(msg)

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
        inbound = await self.inbox.pending()
        for msg in inbound:
            await super().put_inbound(msg)
        outbound = await self.outbox.due(pending_all=True)
        for out in outbound:
            await super().put_outbound(out)
        return len(inbound), len(outbound)
