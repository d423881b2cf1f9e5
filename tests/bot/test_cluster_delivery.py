"""Replies among replicas: the outbox claim is a write under the chat partition's fence
(refused once another replica holds the lease), the last look before the platform call
refuses a chat this replica no longer runs, and a partition whose reply is still being
sent (or not yet marked sent) is not idle, so it is never handed to another replica
whose claim would take that row and post it a second time."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from pathlib import Path

import asyncpg
import pytest

from bot.bus.durable import DurableBus
from bot.cluster.fence import Fence
from bot.cluster.leases import LeaseTable
from bot.delivery import Delivery
from bot.dispatcher.dispatcher import Dispatcher
from bot.dispatcher.ownership import ChatOwnership
from bot.errors import FencedOff
from bot.messages import ChatKey, OutboundMessage
from bot.store.base import Storage
from bot.store.db import Database
from bot.store.postgres import postgres_storage
from bot.store.sqlite import sqlite_storage
from channels.base import Sent
from tests.bot.test_cluster_daemons import until_lapsed
from tests.fakes.channel import FakeChannel
from tests.fakes.postgres import emptied_schema
from tests.fakes.waiting import until

KEY = ChatKey("test", "5")


class Replica:
    """Delivery as one replica runs it: ``held`` says whether it runs the chat now."""

    def __init__(self, storage: Storage, fence: Fence | None, channel: FakeChannel) -> None:
        self.held = True
        self.bus = DurableBus(storage.inbox, storage.outbox, shared=True)
        self.delivery = Delivery(
            storage.outbox,
            {channel.name: channel},
            runs=lambda _key: self.held,
            fence=lambda _key: self._fence(fence),
        )
        self.task: asyncio.Task[None] | None = None

    def _fence(self, fence: Fence | None) -> Fence | None:
        if not self.held:
            raise FencedOff("not held")
        return fence

    def __enter__(self) -> Replica:
        self.task = asyncio.create_task(self.delivery.route(self.bus))
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.task is not None
        self.task.cancel()


@pytest.fixture
async def pg() -> AsyncIterator[tuple[str, Storage]]:
    url = await emptied_schema()
    storage = postgres_storage(url)
    await storage.backend.open()
    yield url, storage
    await storage.backend.close()


async def test_a_claim_under_a_lease_that_moved_on_is_refused(pg: tuple[str, Storage]) -> None:
    url, storage = pg
    conn = await asyncpg.connect(url)
    try:
        token = (await LeaseTable(conn, "a", ttl_ms=300).take(["chats:1"], 1))["chats:1"]
        await until_lapsed(conn)
        new = (await LeaseTable(conn, "b", ttl_ms=60_000).take(["chats:1"], 1))["chats:1"]
    finally:
        await conn.close()
    reply = OutboundMessage(key=KEY, text="late", idempotency_key="r1")
    # "a" still believes it runs the chat (its local deadline not yet passed, say).
    stale, fresh = FakeChannel(), FakeChannel()
    with Replica(storage, Fence("chats:1", "a", token), stale) as a:
        await a.bus.put_outbound(reply)
        # taken from the bus and its claim over (the lock is held while a burst is claimed)
        await until(lambda: not a.bus.outbound_depth() and not a.delivery._handing_over.locked())
    assert stale.sent == []  # its claim was refused: the row stays the owner's
    assert await storage.outbox.in_doubt("nobody") == {}  # not even claimed
    with Replica(storage, Fence("chats:1", "b", new), fresh) as b:
        await b.bus.requeue(lambda _key: True)  # the owner reads the pending row
        await until(lambda: [m.text for m in fresh.sent] == ["late"], 5)
        await until(lambda: b.delivery.settled(lambda _key: True), 5)  # marked sent
    assert await storage.outbox.depth() == 0


class LookingUp(FakeChannel):
    """A channel that looks a post in doubt up first (as Slack does); ``during`` runs
    while it is asked, where a replica may lose its lease (a freeze, a slow call)."""

    def __init__(self, during: Callable[[], None]) -> None:
        super().__init__()
        self.during = during
        self.looked: list[str] = []

    async def in_doubt(self, msg: OutboundMessage, since: datetime) -> None:
        self.looked.append(msg.delivery_key)
        self.during()

    async def send(self, msg: OutboundMessage) -> Sent:
        return await super().send(msg)


async def test_the_last_look_before_the_platform_call_refuses_a_lost_chat(
    tmp_path: Path,
) -> None:
    storage = sqlite_storage(Database(tmp_path / "bot.db"))
    await storage.backend.open()
    try:
        reply = OutboundMessage(key=KEY, text="answer", idempotency_key="r2")
        await storage.outbox.add(reply)
        await storage.outbox.claim([reply], "a dead run")  # in doubt for the next run
        replica: Replica | None = None

        def lose() -> None:
            assert replica is not None
            replica.held = False

        channel = LookingUp(lose)
        replica = Replica(storage, None, channel)
        with replica:
            await replica.bus.requeue(lambda _key: True)
            await until(lambda: channel.looked == [reply.delivery_key], 5)
            await until(lambda: replica.delivery.settled(lambda _key: True), 5)  # attempt over
        assert channel.sent == []  # claimed, looked up, then refused before posting
    finally:
        await storage.backend.close()


class Slow(FakeChannel):
    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()
        self.started = asyncio.Event()

    async def send(self, msg: OutboundMessage) -> Sent:
        self.started.set()
        await self.release.wait()
        return await super().send(msg)


async def test_a_partition_with_a_reply_being_sent_is_not_handed_back(tmp_path: Path) -> None:
    storage = sqlite_storage(Database(tmp_path / "bot.db"))
    await storage.backend.open()
    try:
        channel = Slow()
        replica = Replica(storage, None, channel)

        async def turn(_msg: object) -> None:
            return None

        ownership = ChatOwnership(
            replica.bus,
            Dispatcher(replica.bus, turn),
            partitions=1,
            poll_s=1.0,
            settled=replica.delivery.settled,
        )
        with replica:
            assert ownership.idle("chats:0")
            await replica.bus.put_outbound(
                OutboundMessage(key=KEY, text="slow", idempotency_key="r3")
            )
            await asyncio.wait_for(channel.started.wait(), 5)
            assert not ownership.idle("chats:0")  # being sent: a newcomer's claim would take it
            channel.release.set()
            await until(lambda: ownership.idle("chats:0"), 5)  # sent and marked sent
        assert await storage.outbox.depth() == 0
    finally:
        await storage.backend.close()
