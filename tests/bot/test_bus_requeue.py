"""A replica's poll of the shared inbox reads each pending row once between its full
reads: the pending ids first, then the payloads of the rows it has not read (a backlog
waiting its turn was parsed again at every poll, and a busy replica polls back to back,
woken by every message journaled). A partition gained, and once per poll interval, read
them all again; a message the dispatcher passed over is read again at the next poll,
before the ones after it, and a partition is polled only once its gained read queued
all its rows. The outbox's unsent rows are read at the full reads alone."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest_asyncio

from bot.bus.durable import DurableBus
from bot.cluster.partitions import lease_name, partition_of
from bot.dispatcher.dispatcher import Dispatcher
from bot.dispatcher.ownership import ChatOwnership
from bot.messages import ChatKey, InboundMessage, OutboundMessage
from bot.store.base import Storage
from bot.store.sqlite import sqlite_storage

OURS = ChatKey("telegram", "1")
THEIRS = ChatKey("telegram", "2")  # a chat of a partition another replica holds
POLL_S = 1.0


class CountingInbox:
    """The SQLite inbox, saying which rows' payloads were read."""

    def __init__(self, inbox: Any) -> None:
        self._inbox = inbox
        self.read: list[int] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inbox, name)

    async def read_pending(self, ids: Sequence[int]) -> list[tuple[int, InboundMessage]]:
        self.read += ids
        return list(await self._inbox.read_pending(ids))


class CountingOutbox:
    """The SQLite outbox, counting the reads of every unsent row."""

    def __init__(self, outbox: Any) -> None:
        self._outbox = outbox
        self.reads = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._outbox, name)

    async def due(self, *args: Any, **kwargs: Any) -> list[OutboundMessage]:
        self.reads += 1
        return list(await self._outbox.due(*args, **kwargs))


@pytest_asyncio.fixture
async def storage(tmp_path: Path) -> AsyncIterator[Storage]:
    opened = sqlite_storage(tmp_path / "bus.db")
    await opened.backend.open()
    try:
        yield opened
    finally:
        await opened.backend.close()


def _ours(key: ChatKey) -> bool:
    return key == OURS


async def _bus(storage: Storage) -> tuple[DurableBus, CountingInbox, list[float]]:
    inbox = CountingInbox(storage.inbox)
    bus = DurableBus(inbox, storage.outbox, shared=True)  # type: ignore[arg-type]
    now = [0.0]
    bus.clock = lambda: now[0]
    return bus, inbox, now


async def _queued(bus: DurableBus) -> list[str]:
    return [(await bus.get_inbound()).message_id for _ in range(bus.inbound_depth())]


async def test_a_poll_reads_only_rows_it_has_not_read(storage: Storage) -> None:
    bus, inbox, now = await _bus(storage)
    for i in range(3):
        await bus.put_inbound(InboundMessage(OURS, "u", f"m{i}", message_id=f"o{i}"))
        await bus.put_inbound(InboundMessage(THEIRS, "u", f"m{i}", message_id=f"t{i}"))
    assert bus.inbound_depth() == 0  # shared: journaled only, the poll queues it

    assert await bus.requeue(_ours, fresh_for=POLL_S) == (3, 0)  # the first: all read
    assert len(inbox.read) == 6
    assert await bus.requeue(_ours, fresh_for=POLL_S) == (0, 0)  # nothing new: none read
    assert len(inbox.read) == 6
    assert await bus.requeue(_ours) == (3, 0)  # a partition gained: all, as they are
    assert len(inbox.read) == 6  # (not through the poll's reading)
    assert await bus.requeue(_ours, fresh_for=POLL_S) == (0, 0)

    await bus.put_inbound(InboundMessage(OURS, "u", "late", message_id="o3"))
    assert await bus.requeue(_ours, fresh_for=POLL_S) == (1, 0)
    assert len(inbox.read) == 7  # the new row alone
    assert await _queued(bus) == [
        "o0",
        "o1",
        "o2",
        "o0",
        "o1",
        "o2",
        "o3",
    ]  # the dispatcher drops repeats

    now[0] += POLL_S  # once per poll interval, every pending row again
    assert await bus.requeue(_ours, fresh_for=POLL_S) == (4, 0)
    assert await bus.requeue(_ours, fresh_for=POLL_S) == (0, 0)


async def test_a_message_passed_over_is_read_again_before_the_next(storage: Storage) -> None:
    """The dispatcher found the chat not run here for a moment (a lease past its
    deadline before the renewal): that message comes again, ahead of the one after."""
    bus, _, _ = await _bus(storage)
    first = InboundMessage(OURS, "u", "x", message_id="o0")
    await bus.put_inbound(first)
    assert await bus.requeue(_ours, fresh_for=POLL_S) == (1, 0)
    bus.passed_over(await bus.get_inbound())
    await bus.put_inbound(InboundMessage(OURS, "u", "y", message_id="o1"))
    assert await bus.requeue(_ours, fresh_for=POLL_S) == (2, 0)
    assert await _queued(bus) == ["o0", "o1"]


async def test_a_partition_gained_reads_what_the_poll_did_not_keep(storage: Storage) -> None:
    """The poll read a chat's message when its partition was another replica's; the
    partition comes here: that message is queued, then the ones after it."""
    bus, _, _ = await _bus(storage)
    first = InboundMessage(THEIRS, "u", "x", message_id="t0")
    await bus.put_inbound(first)
    assert await bus.requeue(_ours, fresh_for=POLL_S) == (0, 0)  # read, not ours
    assert await bus.requeue(lambda key: key == THEIRS) == (1, 0)  # its partition came
    await bus.put_inbound(InboundMessage(THEIRS, "u", "y", message_id="t1"))
    assert await bus.requeue(lambda _key: True, fresh_for=POLL_S) == (1, 0)
    assert await _queued(bus) == ["t0", "t1"]
    await storage.inbox.done(first)
    assert await bus.requeue(lambda _key: True, fresh_for=POLL_S) == (0, 0)
    assert len(bus._read_in) == 1  # a finished row is forgotten


async def test_the_outbox_is_read_at_full_reads_not_at_every_wake_up(storage: Storage) -> None:
    """Replies a platform outage left unsent (another replica's among them) are parsed
    once per poll interval, not at every message journaled; a partition gained reads
    them at once. The replica's own replies are queued as they are written."""
    outbox = CountingOutbox(storage.outbox)
    bus = DurableBus(storage.inbox, outbox, shared=True)  # type: ignore[arg-type]
    now = [0.0]
    bus.clock = lambda: now[0]
    for i in range(3):  # written by another replica: only in the table
        await storage.outbox.add(OutboundMessage(OURS, f"reply {i}", message_id=f"r{i}"))

    assert await bus.requeue(_ours, fresh_for=POLL_S) == (0, 3)  # the first: a full read
    for i in range(5):  # woken by messages journaled meanwhile
        await bus.put_inbound(InboundMessage(OURS, "u", f"m{i}", message_id=f"o{i}"))
        assert await bus.requeue(_ours, fresh_for=POLL_S) == (1, 0)
    assert outbox.reads == 1
    assert await bus.requeue(_ours) == (5, 3)  # a partition gained: all of it, now
    assert outbox.reads == 2

    now[0] += POLL_S
    assert await bus.requeue(_ours, fresh_for=POLL_S) == (5, 3)  # once per interval
    assert outbox.reads == 3


class PollingBus(DurableBus):
    """The shared bus, saying when the replica's poll has read (and queued)."""

    def __init__(self, storage: Storage) -> None:
        super().__init__(storage.inbox, storage.outbox, shared=True)
        self.polled = asyncio.Event()

    async def requeue(self, *args: Any, **kwargs: Any) -> tuple[int, int]:
        counts = await super().requeue(*args, **kwargs)
        if kwargs.get("fresh_for") is not None:
            self.polled.set()
        return counts

    async def poll(self) -> None:
        """Wake the replica's poll (as a message it journaled does) and await its read."""
        self.polled.clear()
        self.journaled.set()
        await asyncio.wait_for(self.polled.wait(), 10)


async def test_a_poll_while_a_partition_is_gained_never_queues_a_later_message_first(
    storage: Storage,
) -> None:
    """The chaos test's failure: a replica's poll read a chat's message while another
    replica ran the chat; that one died, and while this one took the partition over
    (looking up the replies in doubt first) a poll queued the chat's next message ahead
    of it. The later turn's history then ended with both messages unanswered, and the
    earlier one was answered after it."""
    bus = PollingBus(storage)
    other = DurableBus(storage.inbox, storage.outbox, shared=True)  # another replica's
    parts = 8
    keys = (ChatKey("telegram", str(n)) for n in range(3, 99))
    mine = next(k for k in keys if partition_of(k, parts) != partition_of(THEIRS, parts))
    in_doubt_polls: list[bool] = []

    async def in_doubt() -> None:  # the lookup's await, a poll meanwhile
        if in_doubt_polls:
            await bus.poll()

    ownership = ChatOwnership(
        bus, Dispatcher(bus, _never), partitions=parts, poll_s=60.0, in_doubt=in_doubt
    )
    try:
        await ownership.gained(lease_name(partition_of(mine, parts)))
        await other.put_inbound(InboundMessage(THEIRS, "u", "m3", message_id="t3"))
        await bus.poll()  # reads m3 and leaves it: the chat is another replica's
        await other.put_inbound(InboundMessage(THEIRS, "u", "m4", message_id="t4"))
        in_doubt_polls.append(True)
        await ownership.gained(lease_name(partition_of(THEIRS, parts)))
        await bus.poll()
        assert await _queued(bus) == ["t3", "t4"]
    finally:
        await ownership.stop()


async def _never(msg: InboundMessage) -> None:
    raise AssertionError(f"no turn runs here: {msg}")
