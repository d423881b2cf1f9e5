"""The message bus between channel adapters and the agent.

Adapters only normalize and ``put_inbound``; the dispatcher consumes inbound messages,
and the daemon's outbound router delivers what the agent and the scheduler put on the
outbound side. The interface is small so a networked bus (Redis Streams partitioned by
ChatKey) can replace the in-process one.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from bot.messages import InboundMessage, OutboundMessage


class Bus(Protocol):
    async def put_inbound(self, msg: InboundMessage) -> None: ...
    async def get_inbound(self) -> InboundMessage: ...
    async def put_outbound(self, msg: OutboundMessage) -> None: ...
    async def get_outbound(self) -> OutboundMessage: ...
    def outbound_done(self) -> None: ...
    async def join_outbound(self) -> None: ...
    def inbound_depth(self) -> int: ...
    def outbound_depth(self) -> int: ...


class InProcessBus:
    """Two asyncio queues. Bounded inbound side gives back-pressure to adapters."""

    def __init__(self, max_inbound: int = 10_000) -> None:
        self._inbound: asyncio.Queue[InboundMessage] = asyncio.Queue(max_inbound)
        self._outbound: asyncio.Queue[OutboundMessage] = asyncio.Queue()

    async def put_inbound(self, msg: InboundMessage) -> None:
        await self._inbound.put(msg)

    async def get_inbound(self) -> InboundMessage:
        return await self._inbound.get()

    async def put_outbound(self, msg: OutboundMessage) -> None:
        await self._outbound.put(msg)

    async def get_outbound(self) -> OutboundMessage:
        return await self._outbound.get()

    def outbound_done(self) -> None:
        """Called by the router once a message taken from the outbound side is handled."""
        self._outbound.task_done()

    async def join_outbound(self) -> None:
        """Wait until every outbound message put so far has been handled."""
        await self._outbound.join()

    def inbound_depth(self) -> int:
        return self._inbound.qsize()

    def outbound_depth(self) -> int:
        return self._outbound.qsize()
