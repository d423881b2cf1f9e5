"""Inbound: the real discord.py parses gateway dispatches from the fake Discord, and the
adapter decides what becomes a turn (DMs, mentions, replies, threads) and how it is keyed."""

from __future__ import annotations

from bot.messages import ChatKey, OutboundMessage
from tests.fakes import discord_api
from tests.fakes.discord_api import DiscordFactory, FakeDiscord, user

fake_discord = discord_api.fake_discord
discord_channel = discord_api.discord_channel


async def test_dm_turn_through_the_adapter(discord_channel: DiscordFactory, fake_discord):
    channel, inbox = await discord_channel()
    assert channel.connected
    sent = fake_discord.user_message("hello there", channel_id=4242)
    [msg] = await inbox.wait(1)
    assert msg.key == ChatKey("discord", "4242")
    assert msg.text == "hello there"
    assert msg.user_id == "7" and msg.sender == "discord:7"
    assert msg.message_id == sent["id"]  # Discord's id: redeliveries dedup in the inbox
    assert msg.extras["workspace_key"] == "discord:dm"
    result = await channel.send(OutboundMessage(msg.key, "hi!", reply_to=msg.message_id))
    [post] = await fake_discord.wait_posts(1, channel_id=4242)
    assert post.json["content"] == "hi!"
    assert str(post.json["message_reference"]["message_id"]) == sent["id"]
    assert post.json["message_reference"]["fail_if_not_exists"] is False
    assert len(result.ids) == 1 and result.ids[0].isdigit()
