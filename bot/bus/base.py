"""The message bus between channel adapters and the agent (no storage here).

Adapters only normalize and ``put_inbound``; the dispatcher consumes inbound messages
and the delivery side consumes outbound ones. The interface is small so a networked bus
(Redis Streams partitioned by ChatKey) can replace the in-process one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol

from bot.messages import InboundMessage, OutboundMessage


class Bus(Protocol):
    async def put_inbound(self, msg: InboundMessage) -> None: ...
    async def get_inbound(self) -> InboundMessage: ...
    async def inbound_done(self, msg: InboundMessage) -> None: ...
    async def inbound_started(self, msg: InboundMessage) -> int: ...
    async def inbound_failed(self, msg: InboundMessage) -> None: ...
    async def inbound_interrupted(self, msgs: Sequence[InboundMessage]) -> None: ...
    async def put_outbound(self, msg: OutboundMessage) -> None: ...
    async def put_outbound_many(self, msgs: list[OutboundMessage]) -> None: ...
    async def get_outbound(self) -> OutboundMessage: ...
    def inbound_depth(self) -> int: ...
    def outbound_depth(self) -> int: ...
    def passed_over(self, msg: InboundMessage) -> None:
        """The dispatcher did not take ``msg`` (its chat is run elsewhere right now)."""
        ...


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

    async def inbound_started(self, msg: InboundMessage) -> int:
        """How many times a turn started for ``msg``, this one included."""
        return 1  # nothing outlives the process here, so no earlier attempt is known

    async def inbound_failed(self, msg: InboundMessage) -> None:
        return None

    async def inbound_interrupted(self, msgs: Sequence[InboundMessage]) -> None:
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

    def passed_over(self, msg: InboundMessage) -> None:
        return None  # nothing but this process put it here

    def outbound_depth(self) -> int:
        return self._outbound.qsize()
