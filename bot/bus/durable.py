"""The journaled bus: the in-process queues backed by the SQLite inbox and outbox.

``put_inbound`` returns only once a message is in the inbox (so a channel may then
acknowledge it to its platform), and ``put_outbound`` only once a reply is in the
outbox; :meth:`DurableBus.replay` re-queues what a previous run left unfinished.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from bot.bus.base import InProcessBus
from bot.messages import ChatKey, InboundMessage, OutboundMessage
from bot.store.base import Inbox, Outbox

log = logging.getLogger(__name__)


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

    async def inbound_interrupted(self, msg: InboundMessage) -> None:
        await self.inbox.interrupted(msg)

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

    async def requeue(self, keep: Callable[[ChatKey], bool]) -> tuple[int, int]:
        """Queue the unfinished messages and replies of the chats ``keep`` selects (a
        replica's partitions: taken over, or journaled by another replica); the
        dispatcher and the outbox claims drop what is already queued or being sent."""
        inbound = [m for m in await self.inbox.pending() if keep(m.key)]
        for msg in inbound:
            await super().put_inbound(msg)
        outbound = [m for m in await self.outbox.due(pending_all=True) if keep(m.key)]
        for out in outbound:
            await super().put_outbound(out)
        return len(inbound), len(outbound)
