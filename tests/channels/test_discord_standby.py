"""Replicas and one Discord bot: only the replica holding the gateway's lease (one per
shard) opens a gateway session (two sessions on a shard would each get every event);
the others stay logged in and send over REST; when the lease moves, the holder closes
its session and the next one identifies and receives what follows."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.messages import ChatKey, OutboundMessage
from channels.base import ReceivesAlone
from channels.discord.adapter import DiscordChannel
from channels.discord.settings import DiscordSettings
from tests.fakes import discord_api
from tests.fakes.discord_api import FakeDiscord, Inbox
from tests.fakes.slack_api import MemoryState
from tests.fakes.waiting import until

fake_discord = discord_api.fake_discord

IDENTIFY = 2


@pytest.fixture
async def replicas(fake_discord: FakeDiscord) -> AsyncIterator[list[tuple[DiscordChannel, Inbox]]]:
    """Two channels as two replicas build them (standing by), sharing one state store."""
    state = MemoryState()  # the shared store's kv table
    started = []
    for _ in range(2):
        settings = DiscordSettings(token=fake_discord.token, api_base=fake_discord.api_base)
        channel = DiscordChannel(
            settings, state=state, identify_delay_s=0.01, guild_ready_timeout=0.05, standby=True
        )
        inbox = Inbox()
        await channel.start(inbox.put)
        started.append((channel, inbox))
    yield started
    for channel, _ in started:
        await channel.stop()


async def test_one_replica_holds_the_gateway_and_the_next_takes_it_over(
    replicas: list[tuple[DiscordChannel, Inbox]], fake_discord: FakeDiscord
) -> None:
    (first, one), (second, two) = replicas
    assert isinstance(first, ReceivesAlone) and first.receive_lease == "discord:shard:0"
    await until(lambda: first.connected and second.connected, 10)  # logged in: healthy
    await second.send(OutboundMessage(key=ChatKey("discord", "4242"), text="from standby"))
    assert [p.params["channel_id"] for p in fake_discord.posts()] == ["4242"]
    assert fake_discord.ops(IDENTIFY) == []  # nobody opens a session without the lease

    await first.receive(True)
    await fake_discord.wait_session()
    said = fake_discord.user_message("one")
    await one.wait(1)
    await first.receive(False)  # its lease lapsed: its session ends
    await fake_discord.wait_until(lambda: not fake_discord._sockets)
    assert first.connected  # standing by again: logged in, sending over REST

    await second.receive(True)  # the replica that took the lease
    await fake_discord.wait_session()
    later = fake_discord.user_message("two")
    await two.wait(1)
    assert [m.message_id for m in one.messages] == [said["id"]]
    assert [m.message_id for m in two.messages] == [later["id"]]
    assert len(fake_discord.ops(IDENTIFY)) == 2  # one session at a time, each identified once
