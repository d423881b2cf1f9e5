"""Chats across replicas: two dispatchers, each with its own PgCluster on the real
PostgreSQL (leases) over one shared inbox and outbox. Every message journaled by either
replica is answered once, in order per chat, by the replica holding the chat's
partition, never two turns of one chat at once, and each due reminder fires once, on
the replica running its chat; a replica that stops renewing (frozen)
has its chats answered by the other after the TTL."""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest

from bot.bus.durable import DurableBus
from bot.cluster.fence import current
from bot.cluster.partitions import lease_name, partition_of
from bot.cluster.replica import PgCluster, Timing
from bot.dispatcher.dispatcher import Dispatcher
from bot.dispatcher.ownership import ChatOwnership
from bot.errors import FencedOff
from bot.messages import ChatKey, InboundMessage, OutboundMessage, utcnow
from bot.reminders.scheduler import ReminderScheduler
from bot.store.base import Storage
from bot.store.db import Database
from bot.store.reminders import ReminderKind
from bot.store.sqlite import sqlite_storage
from tests.fakes.pg_schema import cluster_schema
from tests.fakes.waiting import until

PARTITIONS = 8


@dataclass
class Log:
    """Every turn any replica ran: (replica, chat, number), and turns running now."""

    turns: list[tuple[str, ChatKey, int]] = field(default_factory=list)
    running: set[ChatKey] = field(default_factory=set)
    overlaps: list[ChatKey] = field(default_factory=list)

    def per_chat(self) -> dict[ChatKey, list[int]]:
        chats: dict[ChatKey, list[int]] = defaultdict(list)
        for _, key, number in self.turns:
            chats[key].append(number)
        return chats


@dataclass
class Replica:
    name: str
    bus: DurableBus
    dispatcher: Dispatcher
    cluster: PgCluster
    ownership: ChatOwnership
    task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.cluster.start(self.ownership)
        self.task = asyncio.create_task(self.dispatcher.run())

    def freeze(self) -> None:
        """Nothing of it runs any more: no renewal, no turn, no poll (SIGSTOP)."""
        assert self.cluster._task is not None and self.task is not None
        self.cluster._task.cancel()
        self.task.cancel()

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
        await self.dispatcher.drain(1.0)
        await self.ownership.stop()
        await self.cluster.stop()


def replica(
    name: str, url: str, storage: Storage, log: Log, ttl_s: float, *, poll_s: float = 0.05
) -> Replica:
    timing = Timing(ttl_s=ttl_s, renew_s=0.1, partitions=PARTITIONS)
    cluster = PgCluster(url, timing=timing, label=name)
    bus = DurableBus(storage.inbox, storage.outbox, shared=True, announce=cluster.announce)

    async def turn(msg: InboundMessage) -> None:
        assert current() is not None and current().lease == lease_name(  # type: ignore[union-attr]
            partition_of(msg.key, PARTITIONS)
        )
        if msg.key in log.running:
            log.overlaps.append(msg.key)
        log.running.add(msg.key)
        try:
            await asyncio.sleep(0.005)  # a model call: other chats' turns run meanwhile
            log.turns.append((name, msg.key, int(msg.text)))
        finally:
            log.running.discard(msg.key)

    dispatcher = Dispatcher(bus, turn, cluster=cluster, retry_s=0.01)
    ownership = ChatOwnership(bus, dispatcher, partitions=PARTITIONS, poll_s=poll_s)
    return Replica(name, bus, dispatcher, cluster, ownership)


@pytest.fixture
async def shared(tmp_path: Path) -> AsyncIterator[tuple[str, Storage]]:
    storage = sqlite_storage(Database(tmp_path / "bot.db"))
    await storage.backend.open()
    async with cluster_schema() as url:
        yield url, storage
    await storage.backend.close()


async def say(bus: DurableBus, key: ChatKey, number: int) -> None:
    await bus.put_inbound(
        InboundMessage(key, "u1", str(number), message_id=f"{key.chat_id}-{number}")
    )


@contextlib.asynccontextmanager
async def two(
    url: str, storage: Storage, log: Log, ttl_s: float = 30.0, poll_s: float = 0.05
) -> AsyncIterator[tuple[Replica, Replica]]:
    """Two replicas sharing the partitions. A long TTL unless a test waits for one to
    lapse: a loaded machine must not move a lease in the middle of a test."""
    a = replica("a", url, storage, log, ttl_s, poll_s=poll_s)
    b = replica("b", url, storage, log, ttl_s, poll_s=poll_s)
    await a.start()
    await b.start()
    try:
        await until(lambda: len(a.cluster.held()) == len(b.cluster.held()) == 4, 10)
        yield a, b
    finally:
        await a.stop()
        await b.stop()


async def test_each_message_once_in_order_on_the_replica_running_its_chat(
    shared: tuple[str, Storage],
) -> None:
    url, storage = shared
    log = Log()
    chats = [ChatKey("telegram", f"c{n}") for n in range(12)]
    async with two(url, storage, log) as (a, b):
        for number in range(5):
            for i, key in enumerate(chats):  # either replica may receive any message
                await say((a, b)[(i + number) % 2].bus, key, number)
        await until(lambda: len(log.turns) == 60, 10)
        runner = {key: ("a" if a.cluster.runs(key) else "b") for key in chats}
    assert log.per_chat() == {key: list(range(5)) for key in chats}
    assert not log.overlaps
    assert all(name == runner[key] for name, key, _ in log.turns)
    assert set(runner.values()) == {"a", "b"}  # chats in parallel across replicas
    assert not await storage.inbox.pending()


async def test_a_message_journaled_elsewhere_wakes_its_owner_before_its_poll(
    shared: tuple[str, Storage],
) -> None:
    """LISTEN/NOTIFY as a hint: with a poll once a minute, a message the other replica
    journaled is still answered at once (its NOTIFY names the chat's partition)."""
    url, storage = shared
    log = Log()
    chats = [ChatKey("telegram", f"w{n}") for n in range(12)]
    async with two(url, storage, log, poll_s=60.0) as (a, b):
        theirs = [key for key in chats if b.cluster.runs(key)]
        await until(lambda: a.cluster._wakeups.listening and b.cluster._wakeups.listening, 10)
        for key in theirs:
            await say(a.bus, key, 0)  # journaled by a, run by b
        await until(lambda: len(log.turns) == len(theirs), 10)
    assert {key for _, key, _ in log.turns} == set(theirs)
    assert {name for name, _, _ in log.turns} == {"b"}


async def test_a_frozen_replicas_chats_are_answered_by_the_other(
    shared: tuple[str, Storage],
) -> None:
    url, storage = shared
    log = Log()
    chats = [ChatKey("slack", f"C{n}", "1.2") for n in range(10)]
    async with two(url, storage, log, ttl_s=1.0) as (a, b):
        for key in chats:
            await say(b.bus, key, 0)
        await until(lambda: len(log.turns) == 10, 10)
        a.freeze()
        for key in chats:  # journaled while a's chats have nobody to run them
            await say(b.bus, key, 1)
        await until(lambda: len(b.cluster.held()) == PARTITIONS, 5)  # TTL + a tick
        await until(lambda: len(log.turns) == 20, 5)
    assert log.per_chat() == {key: [0, 1] for key in chats}
    assert [name for name, _, number in log.turns if number == 1] == ["b"] * 10
    assert not log.overlaps


async def drained(bus: DurableBus) -> list[OutboundMessage]:
    out = []
    while bus.outbound_depth():
        out.append(await bus.get_outbound())
    return out


async def test_each_reminder_fires_once_on_the_replica_running_its_chat(
    shared: tuple[str, Storage],
) -> None:
    url, storage = shared
    chats = [ChatKey("telegram", f"r{n}") for n in range(20)]
    due = utcnow() - timedelta(seconds=1)
    for key in chats:
        await storage.reminders.add(
            key,
            "u1",
            content=key.chat_id,
            kind=ReminderKind.REMINDER,
            fire_at=due,
            recurrence=None,
            timezone="UTC",
        )
    async with two(url, storage, Log()) as (a, b):
        timers = [ReminderScheduler(storage.reminders, r.bus, runs=r.cluster.runs) for r in (a, b)]
        for timer in timers:  # both timers fire (one after the other: one SQLite file
            await timer.fire_due(utcnow())  # stands in for the shared store here)
        fired = {r.name: await drained(r.bus) for r in (a, b)}
        runner = {key: ("a" if a.cluster.runs(key) else "b") for key in chats}
    # A replica's poll may queue a copy of a row it already queued (delivery's claim
    # drops it): what counts is which replica queued which reminder occurrence.
    keys = {name: {m.delivery_key: m.key for m in msgs} for name, msgs in fired.items()}
    assert not keys["a"].keys() & keys["b"].keys()  # no occurrence fired by both
    assert sorted(k.chat_id for ks in keys.values() for k in ks.values()) == sorted(
        k.chat_id for k in chats
    )  # each once
    assert all(runner[key] == name for name, ks in keys.items() for key in ks.values())
    assert await storage.outbox.depth() == 20
    assert not await storage.reminders.due(utcnow())


async def test_a_turn_stopped_by_a_lost_lease_gives_its_start_back(
    shared: tuple[str, Storage],
) -> None:
    """A turn whose write was refused (its lease moved on) is not a message that kills
    the process: its start is not counted, so lease churn never retires the message."""
    _, storage = shared
    bus = DurableBus(storage.inbox, storage.outbox)
    outcomes = [FencedOff("chats:1 moved on"), FencedOff("and again"), None]

    async def turn(msg: InboundMessage) -> None:
        outcome = outcomes.pop(0)
        if outcome is not None:
            raise outcome

    # One start allowed: without the give-back the second run would retire the message.
    dispatcher = Dispatcher(bus, turn, retry_s=0.01, max_attempts=1)
    running = asyncio.create_task(dispatcher.run())
    try:
        await say(bus, ChatKey("telegram", "c1"), 0)
        for _ in range(3):  # refused, refused, answered: each run read from the inbox
            await until(lambda: not bus.inbound_depth() and dispatcher.idle(lambda _key: True), 5)
            await asyncio.gather(*dispatcher._giving_back)
            if outcomes:
                await bus.replay()
        rows = await storage.backend.fetchall("SELECT status, attempts FROM inbox")  # type: ignore[attr-defined]
    finally:
        running.cancel()
    assert [tuple(r) for r in rows] == [("done", 1)]  # answered, its one counted start
