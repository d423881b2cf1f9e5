"""Two daemons, as `bot run` builds them, on one PostgreSQL store with the fake Telegram
and the fake model: one polls (the other stands by), chats are split between them,
every message is answered once and in order, /healthz names each one's leases, and when
the poller stops the other takes polling over and answers what follows."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.cluster.fence import NOW_MS, Fence, fenced
from bot.cluster.leases import LeaseTable, replicas
from bot.errors import FencedOff
from bot.messages import ChatKey, InboundMessage, OutboundMessage
from bot.store.postgres import postgres_storage
from tests.fakes import daemons, discord_api, telegram_api
from tests.fakes.pg_schema import empty_schema
from tests.fakes.waiting import until

fake_telegram = telegram_api.fake_telegram
fake_discord = discord_api.fake_discord
platform_daemon = daemons.platform_daemon

CHATS = range(101, 107)
IDENTIFY = 2  # the gateway's opcode


def answers(fake_telegram: Any) -> dict[int, list[str]]:
    said: dict[int, list[str]] = defaultdict(list)
    for call in fake_telegram.sent():
        said[int(call.params["chat_id"])].append(call.params["text"])
    return said


def leases(daemon: Any) -> set[str]:
    return set(daemon.cluster.held())


async def test_two_replicas_on_one_store_are_one_bot(
    platform_daemon: Any, fake_telegram: Any, tmp_path: Path
) -> None:
    channels = {"telegram": fake_telegram.section()}
    async with empty_schema() as url:
        common: dict[str, Any] = {
            "store": {"url": url},
            # A TTL well above a loaded machine's stalls (a tick may take a while then): the
            # leases must not lapse and move while the test looks; a clean stop releases
            # them at once, so the takeover below never waits for it.
            "cluster": {"lease_ttl_s": 20, "renew_every_s": 0.2, "partitions": 8, "poll_s": 0.1},
        }
        a = await platform_daemon(channels, data_dir=tmp_path / "a", **common)
        b = await platform_daemon(channels, data_dir=tmp_path / "b", **common)

        def pollers() -> list[Any]:
            return [d for d in (a, b) if "telegram:poll" in leases(d)]

        # The split and the poller, both settled (the poll lease is taken on a tick of its own).
        await until(
            lambda: (
                len(leases(a) - {"telegram:poll"}) == 4 == len(leases(b) - {"telegram:poll"})
                and len(pollers()) == 1
            )
        )
        [poller] = pollers()
        standby = b if poller is a else a
        for n in range(3):
            for chat in CHATS:
                fake_telegram.message(f"m{chat}-{n}", chat_id=chat)
        await until(lambda: sum(map(len, answers(fake_telegram).values())) == 18)
        expected = {c: [f"echo: m{c}-{n}" for n in range(3)] for c in CHATS}
        assert answers(fake_telegram) == expected
        health = (await poller.health()).body()
        assert "telegram:poll#" in str(health["leases"]) and health["status"] == "ok"
        assert health["cluster"] == "ok" and "cluster_differs" not in health  # one config
        assert "telegram:poll" not in str((await standby.health()).body()["leases"])
        conn = await asyncpg.connect(url)
        try:  # each heartbeat names its web app's bound port ([web] port = 0), not 0
            beats = sorted(r.web for r in await replicas(conn))
        finally:
            await conn.close()
        assert beats == sorted(f"127.0.0.1:{d.web.port}" for d in (a, b))
        await poller.stop(timeout=2)  # its leases released: the other takes them over
        await until(lambda: "telegram:poll" in leases(standby) and len(leases(standby)) == 9)
        fake_telegram.message("after", chat_id=CHATS[0])
        await until(lambda: answers(fake_telegram)[CHATS[0]][-1] == "echo: after")
        await standby.stop(timeout=2)
    assert sum(map(len, answers(fake_telegram).values())) == 19


async def test_the_shared_store_refuses_a_turns_writes_once_its_lease_moved_on() -> None:
    """Session append, outbox add and inbox done under a fence whose lease lapsed and
    was taken by another replica: each refused, nothing of them committed."""
    async with empty_schema() as url:
        storage = postgres_storage(url)
        await storage.backend.open()
        try:
            msg = InboundMessage(ChatKey("telegram", "5"), "u1", "hi", message_id="m1")
            assert await storage.inbox.accept(msg)
            conn = await asyncpg.connect(url)
            try:
                token = (await LeaseTable(conn, "a", ttl_ms=300).take(["chats:1"], 1))["chats:1"]
                with fenced(Fence("chats:1", "a", token)):
                    await storage.sessions.append(msg.key, [{"role": "user", "content": "hi"}])
                    await until_lapsed(conn)
                    await LeaseTable(conn, "b", ttl_ms=60_000).take(["chats:1"], 1)
                    with pytest.raises(FencedOff):
                        await storage.sessions.append(msg.key, [{"role": "user", "content": "x"}])
                    with pytest.raises(FencedOff):
                        await storage.outbox.add(OutboundMessage.reply(msg, "late"))
                    with pytest.raises(FencedOff):
                        await storage.inbox.done(msg)
            finally:
                await conn.close()
            assert [m["content"] for m in await storage.sessions.history(msg.key)] == ["hi"]
            assert await storage.outbox.depth() == 0
            assert [m.message_id for m in await storage.inbox.pending()] == ["m1"]
        finally:
            await storage.backend.close()


async def until_lapsed(conn: Any) -> None:
    while await conn.fetchval(  # noqa: ASYNC110 (the server's clock: no event to await)
        f"SELECT expires_ms > {NOW_MS} FROM cluster_leases WHERE name = 'chats:1'"
    ):
        await asyncio.sleep(0.02)


async def test_one_of_two_replicas_holds_discords_gateway_and_the_other_takes_it_over(
    platform_daemon: Any, fake_discord: Any, tmp_path: Path
) -> None:
    """The daemon's lease wiring for a second platform: discord:shard:0 is a single
    lease like telegram:poll; its holder alone opens a gateway session, and when it
    stops the other identifies and answers what follows."""
    channels = {
        "discord": {
            "token": fake_discord.token,
            "api_base": fake_discord.api_base,
            "allow_from": ["*"],
        }
    }
    tuning = {"discord": {"identify_delay_s": 0.01, "guild_ready_timeout": 0.05}}
    async with empty_schema() as url:
        common: dict[str, Any] = {
            "store": {"url": url},
            "cluster": {"lease_ttl_s": 30, "renew_every_s": 0.2, "partitions": 4, "poll_s": 0.1},
        }
        a = await platform_daemon(channels, extras=tuning, data_dir=tmp_path / "a", **common)
        b = await platform_daemon(channels, extras=tuning, data_dir=tmp_path / "b", **common)
        await fake_discord.wait_session()
        holders = [d for d in (a, b) if "discord:shard:0" in leases(d)]
        assert len(holders) == 1 and len(fake_discord.ops(IDENTIFY)) == 1
        holder, other = holders[0], (b if holders[0] is a else a)
        fake_discord.user_message("first")
        await fake_discord.wait_until(lambda: said(fake_discord) == ["echo: first"])
        await holder.stop(timeout=2)  # its lease released: the other connects
        await until(lambda: "discord:shard:0" in leases(other), 10)
        await fake_discord.wait_session()
        fake_discord.user_message("second")
        await fake_discord.wait_until(lambda: said(fake_discord) == ["echo: first", "echo: second"])
        await other.stop(timeout=2)
    assert len(fake_discord.ops(IDENTIFY)) == 2  # one session at a time


def said(fake_discord: Any) -> list[str]:
    return [p.json.get("content", "") for p in fake_discord.posts()]
