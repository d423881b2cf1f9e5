"""Rows another run was sending are handed to the channel's lookup before they are posted
again: at start (a run that died) and, among replicas, when a partition is gained from a
replica that died mid-post (ChatOwnership asks Delivery before it queues the rows)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path

from bot.bus.durable import DurableBus
from bot.cluster.partitions import lease_name, partition_of
from bot.delivery import Delivery
from bot.dispatcher.dispatcher import Dispatcher
from bot.dispatcher.ownership import ChatOwnership
from bot.messages import ChatKey, InboundMessage, OutboundMessage
from bot.store.db import Database
from bot.store.sqlite import sqlite_storage
from tests.fakes.channel import FakeChannel

PARTITIONS = 8
CHAT = ChatKey("test", "c1")


class LookingChannel(FakeChannel):
    """Records which deliveries it was told to look up (SupportsLookup)."""

    def __init__(self) -> None:
        super().__init__()
        self.doubted: list[str] = []

    async def in_doubt(self, msg: OutboundMessage, since: datetime) -> None:
        assert not any(m.delivery_key == msg.delivery_key for m in self.sent)
        self.doubted.append(msg.delivery_key)


async def _no_turn(_msg: InboundMessage) -> None:
    raise AssertionError("no turn runs here")


async def test_a_gained_partitions_rows_in_doubt_are_looked_up_first(tmp_path: Path) -> None:
    storage = sqlite_storage(Database(tmp_path / "bot.db"))
    await storage.backend.open()
    bus = DurableBus(storage.inbox, storage.outbox, shared=True)
    channel = LookingChannel()
    delivery = Delivery(storage.outbox, {"test": channel})
    router = asyncio.create_task(delivery.route(bus))
    ownership = ChatOwnership(
        bus,
        Dispatcher(bus, _no_turn),
        partitions=PARTITIONS,
        poll_s=60.0,
        in_doubt=delivery.look_up_in_doubt,
    )
    try:
        await bus.put_outbound(OutboundMessage(CHAT, "warm-up", idempotency_key="warm-up"))
        await channel.wait_for(lambda sent: len(sent) == 1)  # past the start-up reading
        lost = OutboundMessage(CHAT, "posted by a replica that died", idempotency_key="lost")
        await storage.outbox.add(lost)
        assert await storage.outbox.claim([lost], "replica-that-died")  # then it died
        await ownership.gained(lease_name(partition_of(CHAT, PARTITIONS)))
        await channel.wait_for(lambda sent: len(sent) == 2)
        assert channel.doubted == ["lost"]
    finally:
        await ownership.stop()
        router.cancel()
        await asyncio.gather(router, return_exceptions=True)
        await delivery.drain(1.0)
        await storage.backend.close()
