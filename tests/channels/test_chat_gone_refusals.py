"""Which refusals say the chat itself refuses the bot for good (ChatGone: its repeats
end), through the real slack_sdk and discord.py against the fakes; other refusals and
transient failures stay as they were."""

from __future__ import annotations

import pytest

from bot.errors import ChannelError, ChatGone, DeliveryRejected
from bot.messages import ChatKey, OutboundMessage
from tests.fakes import discord_api, slack_api
from tests.fakes.slack_api import FakeSlack

fake_slack = slack_api.fake_slack
slack_channel = slack_api.slack_channel
fake_discord = discord_api.fake_discord
discord_channel = discord_api.discord_channel

SLACK = ChatKey("slack", "C0GROUP")
POST = "POST /channels/{channel_id}/messages"


@pytest.mark.parametrize(
    "error", ["not_in_channel", "channel_not_found", "is_archived", "account_inactive"]
)
async def test_slack_a_channel_that_refuses_the_bot_is_gone(
    fake_slack: FakeSlack, slack_channel: slack_api.ChannelFactory, error: str
) -> None:
    channel, _ = await slack_channel(app_token="", signing_secret="s")
    fake_slack.fail("chat.postMessage", 200, error)
    with pytest.raises(ChatGone, match=error) as raised:
        await channel.send(OutboundMessage(SLACK, "hi"))
    assert not raised.value.thread_only


@pytest.mark.parametrize(("status", "error"), [(200, "msg_too_long"), (500, "internal_error")])
async def test_slack_other_refusals_are_not_the_chat_gone(
    fake_slack: FakeSlack, slack_channel: slack_api.ChannelFactory, status: int, error: str
) -> None:
    channel, _ = await slack_channel(app_token="", signing_secret="s")
    fake_slack.fail("chat.postMessage", status, error)
    with pytest.raises(ChannelError) as raised:
        await channel.send(OutboundMessage(SLACK, "hi"))
    assert not isinstance(raised.value, ChatGone)


@pytest.mark.parametrize(("status", "code"), [(403, 50001), (404, 10003)])
async def test_discord_missing_access_or_unknown_channel_is_gone(
    discord_channel: discord_api.DiscordFactory,
    fake_discord: discord_api.FakeDiscord,
    status: int,
    code: int,
) -> None:
    """In a thread only the thread is gone: its channel may still take the bot."""
    channel, _ = await discord_channel()
    fake_discord.fail(POST, status, code=code, times=2)
    with pytest.raises(ChatGone) as raised:
        await channel.send(OutboundMessage(ChatKey("discord", "555"), "x"))
    assert not raised.value.thread_only
    with pytest.raises(ChatGone) as raised:
        await channel.send(OutboundMessage(ChatKey("discord", "555", "777"), "x"))
    assert raised.value.thread_only


@pytest.mark.parametrize(("status", "code"), [(403, 50013), (400, 50035)])
async def test_discord_other_refusals_are_not_the_chat_gone(
    discord_channel: discord_api.DiscordFactory,
    fake_discord: discord_api.FakeDiscord,
    status: int,
    code: int,
) -> None:
    channel, _ = await discord_channel()
    fake_discord.fail(POST, status, code=code)
    with pytest.raises(ChannelError) as raised:
        await channel.send(OutboundMessage(ChatKey("discord", "555"), "x"))
    assert not isinstance(raised.value, ChatGone)
    assert isinstance(raised.value, DeliveryRejected)
