"""Leases and fencing on the real PostgreSQL (a throwaway schema per test): the SQL of
:mod:`bot.cluster.leases` and :mod:`bot.cluster.fence`, and replicas of
:class:`bot.cluster.replica.PgCluster` sharing partitions, taking over from a dead or
frozen one, and dropping what they hold when their database is cut off."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator

import asyncpg
import pytest

from bot.cluster.base import SingleProcess
from bot.cluster.fence import CHECK_SQL, NOW_MS, Fence, check, current, fenced
from bot.cluster.leases import LeaseTable, leases, replicas
from bot.cluster.partitions import lease_name, partition_of
from bot.cluster.replica import PgCluster, Timing
from bot.errors import FencedOff
from bot.messages import ChatKey
from tests.fakes.pg_cut import CuttableRelay
from tests.fakes.pg_schema import cluster_schema
from tests.fakes.waiting import until


@pytest.fixture
async def url() -> AsyncIterator[str]:
    async with cluster_schema() as schema_url:
        yield schema_url


@contextlib.asynccontextmanager
async def connection(url: str) -> AsyncIterator[asyncpg.Connection]:
    conn = await asyncpg.connect(url)
    try:
        yield conn
    finally:
        await conn.close()


async def lapse(conn: asyncpg.Connection, name: str) -> None:
    """Await (on the server's clock) the end of ``name``'s lease."""
    while await conn.fetchval(  # noqa: ASYNC110 (the server's clock: no event to await)
        f"SELECT expires_ms > {NOW_MS} FROM cluster_leases WHERE name = $1", name
    ):
        await asyncio.sleep(0.02)


class Events:
    """What a replica's daemon would do with its leases: here, a record of it."""

    def __init__(self) -> None:
        self.gains: list[str] = []
        self.losses: list[str] = []
        self.busy: set[str] = set()
        self.wakes: list[str] = []

    async def gained(self, lease: str) -> None:
        self.gains.append(lease)

    async def lost(self, lease: str) -> None:
        self.losses.append(lease)

    def idle(self, lease: str) -> bool:
        return lease not in self.busy

    def woken(self, lease: str) -> None:
        self.wakes.append(lease)


async def test_a_lease_is_taken_once_and_again_only_with_a_new_token(url: str) -> None:
    async with connection(url) as one, connection(url) as two:
        a = LeaseTable(one, "a", ttl_ms=300)
        b = LeaseTable(two, "b", ttl_ms=60_000)
        assert await a.take(["x", "y"], 5) == {"x": 1, "y": 1}
        assert await b.take(["x", "y", "z"], 5) == {"z": 1}  # only the free one
        assert await a.take(["x"], 1) == {}  # held, even by itself: renewing is not taking
        await lapse(one, "x")
        assert await a.renew() == {}  # lapsed leases are not renewed, even unclaimed
        assert await b.take(["x", "y"], 1) == {"x": 2}  # the limit, in name order
        assert await b.renew() == {"x": 2, "z": 1}
        await b.release(["z"])
        assert await a.take(["z"], 1) == {"z": 2}
        held = {(h.name, h.owner, h.token) for h in await leases(one)}
        assert held >= {("x", "b", 2), ("z", "a", 2)}


async def test_a_write_fenced_by_a_lost_token_finds_no_lease_row(url: str) -> None:
    async with connection(url) as one, connection(url) as two:
        a = LeaseTable(one, "a", ttl_ms=200)
        token = (await a.take(["chats:1"], 1))["chats:1"]
        fence = Fence("chats:1", "a", token)
        assert await one.fetchval(CHECK_SQL, *fence.args()) == 1
        await lapse(one, "chats:1")
        assert await one.fetchval(CHECK_SQL, *fence.args()) is None  # lapsed: refused
        await LeaseTable(two, "b", ttl_ms=5000).take(["chats:1"], 1)
        assert await one.fetchval(CHECK_SQL, *fence.args()) is None  # and taken


async def test_a_write_under_a_lost_fence_is_rolled_back(url: str) -> None:
    async with connection(url) as one:
        await one.execute("CREATE TABLE said (n INTEGER)")
        token = (await LeaseTable(one, "a", ttl_ms=200).take(["chats:4"], 1))["chats:4"]

        async def write(n: int) -> None:
            async with one.transaction():
                await check(one)
                await one.execute("INSERT INTO said VALUES ($1)", n)

        await write(0)  # unfenced (one process): never checked
        with fenced(Fence("chats:4", "a", token)):
            await write(1)
            await lapse(one, "chats:4")
            with pytest.raises(FencedOff):
                await write(2)
        assert [r["n"] for r in await one.fetch("SELECT n FROM said ORDER BY n")] == [0, 1]


async def test_a_take_over_waits_for_a_fenced_write_in_progress(url: str) -> None:
    """The check holds the lease row until its transaction ends: a replica taking the
    lease cannot slip in between the old holder's check and its commit."""
    async with connection(url) as one, connection(url) as two, connection(url) as watch:
        token = (await LeaseTable(one, "a", ttl_ms=300).take(["chats:2"], 1))["chats:2"]
        tx = one.transaction()
        await tx.start()
        assert await one.fetchval(CHECK_SQL, "chats:2", "a", token) == 1
        await lapse(watch, "chats:2")
        taking = asyncio.ensure_future(LeaseTable(two, "b", ttl_ms=5000).take(["chats:2"], 1))
        await until_waiting_on_a_lock(watch)
        assert not taking.done()
        await tx.commit()
        assert await asyncio.wait_for(taking, 5) == {"chats:2": token + 1}


async def until_waiting_on_a_lock(conn: asyncpg.Connection) -> None:
    async def waiting() -> None:
        while not await conn.fetchval(  # noqa: ASYNC110 (another session's state)
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            " AND datname = current_database()"
        ):
            await asyncio.sleep(0.01)

    await asyncio.wait_for(waiting(), 5)


def test_a_fence_is_carried_by_the_tasks_a_turn_starts() -> None:
    async def main() -> tuple[Fence | None, Fence | None]:
        fence = Fence("chats:3", "a", 7)
        with fenced(fence):
            inner = await asyncio.create_task(asyncio.sleep(0, current()))
        return inner, current()

    assert asyncio.run(main()) == (Fence("chats:3", "a", 7), None)


async def test_one_process_runs_everything_and_fences_nothing() -> None:
    single = SingleProcess()
    await single.start(Events())
    key = ChatKey("telegram", "1")
    assert single.runs(key) and single.fence(key) is None and single.holds("telegram:poll")
    assert single.held() == {} and single.singles == ()
    await single.stop()


def replica(url: str, **kw: object) -> PgCluster:
    timing = Timing(ttl_s=1.0, renew_s=0.1, partitions=8)
    return PgCluster(url, timing=timing, **kw)  # type: ignore[arg-type]


def partitions_of(cluster: PgCluster) -> set[str]:
    return {n for n in cluster.held() if n.startswith("chats:")}


async def test_replicas_share_the_partitions_and_take_over_a_dead_ones(url: str) -> None:
    first, second = replica(url, singles=["telegram:poll"]), replica(url, singles=["telegram:poll"])
    one, two = Events(), Events()
    await first.start(one)
    try:
        assert len(partitions_of(first)) == 8 and first.holds("telegram:poll")
        await second.start(two)
        await until(lambda: len(partitions_of(first)) == len(partitions_of(second)) == 4, 10)
        assert partitions_of(first).isdisjoint(partitions_of(second))
        assert not second.holds("telegram:poll")  # one poller at a time
        key = ChatKey("telegram", "42")
        runner, other = (first, second) if first.runs(key) else (second, first)
        assert runner.fence(key).lease == lease_name(partition_of(key, 8))
        with pytest.raises(FencedOff):
            other.fence(key)
        async with connection(url) as conn:
            names = {r.replica for r in await replicas(conn) if r.live}
        assert names == {first.replica, second.replica}
        await first.stop()  # a clean stop hands everything over at once
        await until(lambda: len(partitions_of(second)) == 8 and second.holds("telegram:poll"), 5)
    finally:
        await first.stop()
        await second.stop()


async def test_a_dead_replicas_chats_are_taken_when_its_leases_lapse_not_a_tick_later(
    url: str,
) -> None:
    """The survivor wakes at the lapse: with renewals almost a TTL apart, waiting for the
    next regular tick would take nearly two TTLs (7.8 s here); the lapse comes at 4 s."""
    timing = Timing(ttl_s=4.0, renew_s=3.9, partitions=8)
    dead, survivor = PgCluster(url, timing=timing), PgCluster(url, timing=timing)
    await dead.start(Events())  # its one renewal: it holds all 8, then it never renews
    assert dead._task is not None
    dead._task.cancel()
    started = time.monotonic()
    try:
        await survivor.start(Events())
        assert partitions_of(survivor) == set()  # all held by the other, not lapsed yet
        await until(lambda: len(partitions_of(survivor)) == 8, 15)
        assert time.monotonic() - started < 6.0
    finally:
        await survivor.stop()
        await dead.stop()


async def test_a_frozen_replica_resumes_holding_nothing_and_its_writes_are_refused(
    url: str,
) -> None:
    first, second = replica(url), replica(url)
    one = Events()
    await first.start(one)
    try:
        key = ChatKey("slack", "C1", "17.5")
        fence = first.fence(key)
        assert first._task is not None
        first._task.cancel()  # frozen: nothing renews
        await second.start(Events())
        await until(lambda: len(partitions_of(second)) == 8, 5)  # within the TTL + a tick
        assert not first.runs(key)  # its own deadline passed while it was frozen
        async with connection(url) as conn:
            assert await conn.fetchval(CHECK_SQL, *fence.args()) is None
        await first._tick_safely()  # it resumes: every lease it held is reported lost
        assert set(one.losses) == {lease_name(p) for p in range(8)}
        assert partitions_of(first) == set()  # the other one holds its fair share: all 8
    finally:
        await first.stop()
        await second.stop()


async def test_a_replica_cut_off_from_its_database_drops_its_leases(url: str) -> None:
    relay = CuttableRelay(url)
    await relay.start()
    cut_off, other = replica(relay.url), replica(url)
    events = Events()
    try:
        await cut_off.start(events)
        assert len(partitions_of(cut_off)) == 8
        assert cut_off.failing == ""
        relay.sever()
        await other.start(Events())
        await until(lambda: len(events.losses) == 8, 5)
        assert cut_off.held() == {}
        assert cut_off.failing.startswith("lease renewal failing (")  # /healthz says so
        await until(lambda: len(partitions_of(other)) == 8, 5)
        relay.mend()  # back: it gets its fair share again, under new tokens
        await until(lambda: len(partitions_of(cut_off)) == 4, 10)
        assert cut_off.failing == ""
        async with connection(url) as conn:
            tokens = {h.token for h in await leases(conn) if h.owner == cut_off.replica}
        assert min(tokens) >= 2
    finally:
        await cut_off.stop()
        await other.stop()
        await relay.stop()


async def test_a_replica_cut_off_retries_at_its_renewal_pace_not_ten_times_a_second(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Once another replica's lease lapse time had passed, a replica whose database was
    away woke every 0.1 s (the lapse time of its last good tick, never cleared): with
    the defaults 10 connection attempts and warnings a second for the whole outage.
    It retries at its renewal pace now, and warns once per outage."""
    relay = CuttableRelay(url)
    await relay.start()
    slow = Timing(ttl_s=10.0, renew_s=1.5, partitions=8)
    cut_off = PgCluster(relay.url, timing=slow)
    other = PgCluster(url, timing=Timing(ttl_s=1.0, renew_s=0.1, partitions=8))
    try:
        await other.start(Events())
        await cut_off.start(Events())
        await until(lambda: cut_off._lapse_at is not None, 5)  # it has seen other's leases
        lapse_at = cut_off._lapse_at
        assert lapse_at is not None
        relay.sever()
        await until(lambda: cut_off.failing != "" and time.monotonic() > lapse_at + 0.2, 10)
        tried = relay.refused
        await asyncio.sleep(1.0)  # less than one renewal: at most one attempt is due
        assert relay.refused - tried <= 2, relay.refused - tried  # asyncpg tries SSL, then not
        relay.mend()
        await until(lambda: cut_off.failing == "", 10)
        failed = [r for r in caplog.records if "lease renewal failed" in r.getMessage()]
        assert len([r for r in failed if r.levelno >= logging.WARNING]) == 1
    finally:
        await cut_off.stop()
        await other.stop()
        await relay.stop()


async def test_a_busy_partition_is_not_handed_back(url: str) -> None:
    first, second = replica(url), replica(url)
    one = Events()
    one.busy = {lease_name(p) for p in range(8)}  # a turn runs in every partition
    await first.start(one)
    try:
        await second.start(Events())
        await first.wait_tick()
        await first.wait_tick()
        assert len(partitions_of(first)) == 8 and partitions_of(second) == set()
        one.busy = set()
        await until(lambda: len(partitions_of(second)) == 4, 5)
    finally:
        await first.stop()
        await second.stop()


async def test_a_replica_journaling_for_another_ones_chat_wakes_that_one(url: str) -> None:
    """NOTIFY as a hint: the holder of the chat's partition hears it (the others, and
    the announcer for its own chats, send or hear nothing). A long TTL: a loaded machine
    must not move the partition between the NOTIFY and its hearing."""
    timing = Timing(ttl_s=30.0, renew_s=0.1, partitions=8)
    first, second = PgCluster(url, timing=timing), PgCluster(url, timing=timing)
    one, two = Events(), Events()
    await first.start(one)
    await second.start(two)
    try:
        await until(lambda: len(partitions_of(first)) == len(partitions_of(second)) == 4, 10)
        await until(lambda: first._wakeups.listening and second._wakeups.listening, 10)
        keys = [ChatKey("slack", f"C{n}") for n in range(40)]
        theirs = next(k for k in keys if second.runs(k))
        mine = next(k for k in keys if first.runs(k))
        first.announce(mine)  # its own chat: its poll was woken locally, nobody is told
        first.announce(theirs)
        lease = lease_name(partition_of(theirs, 8))
        await until(lambda: two.wakes == [lease], 5)
        assert one.wakes == []
    finally:
        await first.stop()
        await second.stop()
