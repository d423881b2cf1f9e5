"""What the replicas know of each other beyond their leases. They must share the chat
partitions and the channels: a replica that does not is refused at its start with the
difference named (it would answer chats twice, or take chats whose replies it cannot
send: they were refused and lost); one whose model differs is reported by every replica
(log, /healthz), not refused. Replicas gone for long are forgotten."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import pytest

from bot.cluster.agreement import Agreement, compare
from bot.cluster.fence import NOW_MS
from bot.cluster.leases import LeaseTable, replicas
from bot.cluster.replica import PgCluster, Timing
from bot.errors import ConfigError
from tests.bot.test_cluster_leases import Events
from tests.fakes.pg_schema import cluster_schema

TIMING = Timing(ttl_s=30, renew_s=0.1, partitions=4)
BOT = Agreement.of(4, ["telegram", "slack", "cli"], "openai/gpt-4o-mini")


@pytest.fixture
async def url() -> AsyncIterator[str]:
    async with cluster_schema() as schema_url:
        yield schema_url


async def joined(url: str, agreement: Agreement, label: str) -> PgCluster:
    cluster = PgCluster(url, timing=TIMING, label=label, agreement=agreement)
    await cluster.start(Events())
    return cluster


@pytest.mark.parametrize(
    ("other", "named"),
    [
        (Agreement.of(4, ["slack"], BOT.model), "channels are slack here and slack, telegram"),
        (Agreement.of(8, ["telegram", "slack"], BOT.model), "cluster.partitions is 8 here and 4"),
    ],
)
async def test_a_replica_that_would_lose_or_double_messages_is_refused(
    url: str, other: Agreement, named: str
) -> None:
    first = await joined(url, BOT, "first")
    second = PgCluster(url, timing=TIMING, label="second", agreement=other)
    try:
        with pytest.raises(ConfigError) as refused:
            await second.start(Events())
        assert named in str(refused.value) and "on first-" in str(refused.value)
        assert second.held() == {}  # it took no chat
        assert len(first.held()) == TIMING.partitions
    finally:
        await second.stop()
        await first.stop()


async def test_a_different_model_is_reported_by_both_not_refused(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    first = await joined(url, BOT, "first")
    second = await joined(url, Agreement.of(4, ["slack", "telegram"], "openai/other"), "second")
    try:
        await first.wait_tick()  # it sees the newcomer
        for cluster, here, there in (
            (first, BOT.model, "openai/other"),
            (second, "openai/other", BOT.model),
        ):
            [line] = cluster.differences.noted
            assert f"llm.model is {here!r} here and {there!r} on " in line
            assert cluster.differences.refused == ()
        assert caplog.text.count("replicas differ: llm.model") == 2  # once each, not per tick
        await first.wait_tick()
        assert caplog.text.count("replicas differ: llm.model") == 2
    finally:
        await second.stop()
        await first.stop()


async def test_replicas_gone_for_long_are_forgotten_recent_ones_shown(url: str) -> None:
    """A killed replica never deletes its heartbeat row, and each restart is a new
    replica: `bot status` listed every one ever killed."""
    conn = await asyncpg.connect(url)
    try:
        for name, gone_ms in (("killed-last-week", 7 * 86_400_000), ("killed-just-now", 5_000)):
            await LeaseTable(conn, name, ttl_ms=1).beat("host", 1, "2026-01-01", "")
            await conn.execute(
                f"UPDATE cluster_replicas SET expires_ms = {NOW_MS} - $1 WHERE replica = $2",
                gone_ms,
                name,
            )
        cluster = await joined(url, BOT, "new")
        try:
            names = {r.replica for r in await replicas(conn)}
            assert "killed-last-week" not in names and "killed-just-now" in names, names
        finally:
            await cluster.stop()
    finally:
        await conn.close()


def test_the_terminal_and_an_older_replica_are_no_difference() -> None:
    assert not compare(BOT, Agreement.of(4, ["slack", "telegram"], BOT.model), "peer")
    assert Agreement.parse("") is None and Agreement.parse('{"model": 1}') is None
    assert Agreement.parse(BOT.text()) == BOT


async def test_a_peer_replaced_between_two_ticks_is_compared_anew(url: str) -> None:
    """A rolling restart: the replica on another model stops and one on this model
    starts before this one's next tick. The live count stayed 2, so the peers were not
    looked at again and /healthz kept naming the difference with a replica long gone."""
    first = await joined(url, BOT, "first")
    conn = await asyncpg.connect(url)
    try:
        other = Agreement.of(4, ["slack", "telegram"], "openai/other")
        await LeaseTable(conn, "old-peer", ttl_ms=60_000).beat("h", 1, "t", "", other.text())
        await _two_ticks(first)
        assert [line.rsplit(" on ", 1)[1] for line in first.differences.noted] == ["old-peer"]
        async with conn.transaction():  # gone and replaced at once, as between two ticks
            await conn.execute("DELETE FROM cluster_replicas WHERE replica = 'old-peer'")
            await LeaseTable(conn, "new-peer", ttl_ms=60_000).beat("h", 2, "t", "", BOT.text())
        await _two_ticks(first)
        assert first.live == 2 and not first.differences, first.differences
    finally:
        await conn.close()
        await first.stop()


async def _two_ticks(cluster: PgCluster) -> None:
    """Until a tick that began after now has ended."""
    for _ in range(2):
        await asyncio.wait_for(cluster.wait_tick(), 5)
