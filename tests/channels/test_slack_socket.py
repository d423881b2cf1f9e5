"""Socket Mode through the real slack-bolt / slack_sdk against the fake Slack."""

from __future__ import annotations

import asyncio

from bot.messages import ChatKey, OutboundMessage
from tests.fakes import slack_api
from tests.fakes.slack_api import BOT_USER, TEAM, USER, FakeSlack, wait_for

fake_slack = slack_api.fake_slack
slack_channel = slack_api.slack_channel


async def test_dm_turn_is_journaled_before_the_ack_and_answered(fake_slack: FakeSlack, slack_channel):
    channel, inbox = await slack_channel()
    await fake_slack.wait_socket()
    await wait_for(lambda: channel.connected)
    inbox.gate = asyncio.Event()
    event = fake_slack.message("hello there")
    envelope = await fake_slack.push(event)
    await inbox.wait_offered(1)
    assert not fake_slack.acked(envelope)  # the listener is still journaling: no ack yet
    inbox.gate.set()
    await fake_slack.wait_acked(envelope)
    [msg] = await inbox.wait(1)
    assert msg.key == ChatKey("slack", "D0DM", None)
    assert msg.text == "hello there"
    assert msg.message_id == f"D0DM:{event['ts']}"
    assert msg.sender == f"slack:{USER}"
    assert msg.extras["workspace_key"] == f"slack:{TEAM}"
    await channel.typing(msg.key)
    assert ("D0DM", event["ts"], "eyes") in fake_slack.reactions
    sent = await channel.send(OutboundMessage(msg.key, "**hi** back", reply_to=msg.message_id))
    [post] = fake_slack.posts("D0DM")
    assert sent.ids == (post["ts"],)
    assert post["text"] == "*hi* back" and "thread_ts" not in post
    assert post["metadata"]["event_type"] == "bot_delivery"
    assert not fake_slack.reactions  # :eyes: removed once answered
    assert fake_slack.max_open_sockets == 1
