"""Socket Mode through the real slack-bolt / slack_sdk against the fake Slack."""

from __future__ import annotations

import asyncio
import logging

from bot.messages import ChatKey, OutboundMessage
from tests.fakes import slack_api
from tests.fakes.slack_api import BOT_USER, TEAM, USER, FakeSlack, wait_for

fake_slack = slack_api.fake_slack
SOCKET_LOGGER = "channels.slack.socket"  # the logger slack_sdk's Socket Mode client is given
slack_channel = slack_api.slack_channel


async def test_dm_turn_is_journaled_before_the_ack_and_answered(
    fake_slack: FakeSlack, slack_channel
):
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
    await channel.typing(msg.key, "followup:7:2026-12-07T09:00:00+00:00")
    assert not fake_slack.reactions  # a follow-up's turn marks no one's message
    await channel.typing(msg.key, msg.message_id)
    assert fake_slack.reactions == {("D0DM", event["ts"], "eyes")}
    sent = await channel.send(OutboundMessage(msg.key, "**hi** back", reply_to=msg.message_id))
    [post] = fake_slack.posts("D0DM")
    assert sent.ids == (post["ts"],)
    assert post["text"] == "*hi* back" and "thread_ts" not in post
    assert post["metadata"]["event_type"] == "bot_delivery"
    assert not fake_slack.reactions  # :eyes: removed once answered
    assert fake_slack.max_open_sockets == 1


async def _started(fake_slack: FakeSlack, slack_channel, **settings):
    channel, inbox = await slack_channel(**settings)
    await fake_slack.wait_socket()
    await wait_for(lambda: channel.connected)
    return channel, inbox


async def test_mention_is_answered_in_a_new_thread_under_it(fake_slack: FakeSlack, slack_channel):
    channel, inbox = await _started(fake_slack, slack_channel)
    event = fake_slack.mention("what's the weather?")
    await fake_slack.wait_acked(await fake_slack.push(event))
    [msg] = await inbox.wait(1)
    assert msg.key == ChatKey("slack", "C0GENERAL", event["ts"])
    assert msg.text == "what's the weather?"  # the mention is stripped
    assert "thread_context" not in msg.extras
    await channel.send(OutboundMessage(msg.key, "Sunny.", reply_to=msg.message_id))
    [post] = await fake_slack.wait_posts(1, channel="C0GENERAL")
    assert post["thread_ts"] == event["ts"]
    # A reply in that thread needs no new mention: the bot joined it.
    reply = fake_slack.message("and tomorrow?", channel="C0GENERAL", thread_ts=event["ts"])
    await fake_slack.wait_acked(await fake_slack.push(reply))
    [_, second] = await inbox.wait(2)
    assert second.key == msg.key and second.text == "and tomorrow?"
    assert not fake_slack.calls_to("conversations.replies")  # its own thread: no re-read


async def test_first_mention_inside_a_thread_reads_it_once(fake_slack: FakeSlack, slack_channel):
    _, inbox = await _started(fake_slack, slack_channel)
    root = fake_slack.add_message("Deploy failed on prod", channel="C0OPS", user="U0BOB")
    fake_slack.add_message("logs say OOM", channel="C0OPS", user="U0CAROL", thread_ts=root["ts"])
    chatter = fake_slack.message("anyone?", channel="C0OPS", user="U0BOB", thread_ts=root["ts"])
    await fake_slack.wait_acked(await fake_slack.push(chatter))  # not for the bot
    ask = fake_slack.mention("can you summarize?", channel="C0OPS", thread_ts=root["ts"])
    twin = fake_slack.event_for(fake_slack.messages["C0OPS"][-1], channel="C0OPS")
    first, second = await asyncio.gather(fake_slack.push(ask), fake_slack.push(twin))
    await fake_slack.wait_acked(first)
    await fake_slack.wait_acked(second)
    [msg] = await inbox.wait(1)
    assert len(inbox.offered) == 2 and len(inbox.accepted) == 1  # the twins, one kept
    assert inbox.offered[0] == inbox.offered[1]
    assert msg.key == ChatKey("slack", "C0OPS", root["ts"])
    assert msg.extras["thread_context"] == [
        "@U0BOB: Deploy failed on prod",
        "@U0CAROL: logs say OOM",
        "@U0BOB: anyone?",
    ]
    assert msg.text.startswith("Earlier in this Slack thread:\n> @U0BOB: Deploy failed")
    assert msg.text.endswith("\n\ncan you summarize?")
    assert len(fake_slack.calls_to("conversations.replies")) == 1
    later = fake_slack.message("thanks", channel="C0OPS", user="U0BOB", thread_ts=root["ts"])
    await fake_slack.wait_acked(await fake_slack.push(later))
    [_, thanks] = await inbox.wait(2)
    assert thanks.text == "thanks" and len(fake_slack.calls_to("conversations.replies")) == 1


async def test_the_same_event_three_times_is_one_message(fake_slack: FakeSlack, slack_channel):
    _, inbox = await _started(fake_slack, slack_channel)
    event = fake_slack.message("once please")
    envelopes = [await fake_slack.push(event, event_id="Ev1", retry_attempt=i) for i in range(3)]
    for envelope in envelopes:
        await fake_slack.wait_acked(envelope)
    assert len(inbox.offered) == 3
    assert [m.text for m in inbox.accepted] == ["once please"]


async def test_ignored_events_are_acked_and_dropped(fake_slack: FakeSlack, slack_channel):
    _, inbox = await _started(fake_slack, slack_channel)
    echo = fake_slack.message("my own answer", user=BOT_USER, bot_id="B0BOT")
    other_bot = fake_slack.message("beep", user="U0OTHER", bot_id="B0OTHER")
    base = fake_slack.add_message("original", channel="C0GENERAL")
    changed = {
        "type": "message", "subtype": "message_changed", "channel": "C0GENERAL",
        "ts": fake_slack.next_ts(), "hidden": True,
        "message": {**base, "text": f"<@{BOT_USER}> edited"}, "previous_message": base,
    }  # fmt: skip
    deleted = {"type": "message", "subtype": "message_deleted", "channel": "C0GENERAL",
               "ts": fake_slack.next_ts(), "deleted_ts": base["ts"], "hidden": True}  # fmt: skip
    joined = fake_slack.message(
        f"<@{USER}> has joined", channel="C0GENERAL", subtype="channel_join"
    )
    unknown = {"type": "emoji_changed", "subtype": "add", "name": "party", "event_ts": "1.2"}
    unaddressed = fake_slack.message("lunch?", channel="C0GENERAL")
    for event in (echo, other_bot, changed, deleted, joined, unknown, unaddressed):
        await fake_slack.wait_acked(await fake_slack.push(event))
    assert inbox.offered == []


async def test_group_policy_all_answers_channel_messages(fake_slack: FakeSlack, slack_channel):
    _, inbox = await _started(fake_slack, slack_channel, group_policy="all")
    event = fake_slack.message("lunch?", channel="C0GENERAL")
    await fake_slack.wait_acked(await fake_slack.push(event))
    [msg] = await inbox.wait(1)
    assert msg.key == ChatKey("slack", "C0GENERAL", event["ts"])


async def test_a_failed_journal_is_not_acked_and_the_redelivery_counts(
    fake_slack: FakeSlack, slack_channel
):
    _, inbox = await _started(fake_slack, slack_channel)
    inbox.fail_next = 1
    event = fake_slack.message("are you there?")
    envelope = await fake_slack.push(event, event_id="Ev9")
    await inbox.wait_offered(1)
    again = await fake_slack.push(event, event_id="Ev9", retry_attempt=1)
    await fake_slack.wait_acked(again)
    assert not fake_slack.acked(envelope)
    assert [m.text for m in inbox.accepted] == ["are you there?"]


async def test_socket_drop_reconnects_to_one_socket(fake_slack: FakeSlack, slack_channel):
    channel, inbox = await _started(fake_slack, slack_channel)
    await fake_slack.drop_sockets()
    await fake_slack.wait_socket(opened=2)
    await wait_for(lambda: channel.connected)
    event = fake_slack.message("still there?")
    await fake_slack.wait_acked(await fake_slack.push(event))
    await inbox.wait(1)
    await fake_slack.ask_to_reconnect()  # Slack's refresh_requested
    await fake_slack.wait_socket(opened=3)
    await fake_slack.wait_until(lambda: len(fake_slack.sockets) == 1)
    await wait_for(lambda: channel.connected)
    await fake_slack.wait_acked(await fake_slack.push(fake_slack.message("and now?")))
    await inbox.wait(2)
    assert fake_slack.max_open_sockets == 1
    assert len(fake_slack.sockets) == 1
    assert len(fake_slack.calls_to("apps.connections.open")) == 3


async def test_a_cut_connection_is_replaced_by_one_socket(fake_slack: FakeSlack, slack_channel):
    channel, inbox = await _started(fake_slack, slack_channel)
    await fake_slack.drop_sockets(abrupt=True)
    await wait_for(lambda: not channel.connected)
    await fake_slack.wait_socket(opened=2)
    await wait_for(lambda: channel.connected)
    await fake_slack.wait_acked(await fake_slack.push(fake_slack.message("back?")))
    await inbox.wait(1)
    assert fake_slack.max_open_sockets == 1 and len(fake_slack.sockets) == 1


async def test_connected_is_false_while_the_socket_is_down(fake_slack: FakeSlack, slack_channel):
    channel, _ = await _started(fake_slack, slack_channel)
    fake_slack.fail("apps.connections.open", 500, "internal_error", times=1000)
    await fake_slack.drop_sockets()
    await wait_for(lambda: not channel.connected)
    fake_slack._failures.clear()
    await fake_slack.wait_socket(opened=2)
    await wait_for(lambda: channel.connected)


async def test_thread_context_is_capped_to_its_start_and_latest(
    fake_slack: FakeSlack, slack_channel
):
    _, inbox = await _started(fake_slack, slack_channel)
    root = fake_slack.add_message("the question", channel="C0OPS", user="U0BOB")
    for i in range(40):
        fake_slack.add_message(f"reply {i}", channel="C0OPS", user="U0BOB", thread_ts=root["ts"])
    ask = fake_slack.mention("sum it up", channel="C0OPS", thread_ts=root["ts"])
    await fake_slack.wait_acked(await fake_slack.push(ask))
    [msg] = await inbox.wait(1)
    context = msg.extras["thread_context"]
    assert len(context) == 20  # the thread's start and the latest 19
    assert context[0] == "@U0BOB: the question" and context[1] == "@U0BOB: reply 21"
    assert context[-1] == "@U0BOB: reply 39"


async def test_an_outage_logs_once_when_degraded_and_once_when_recovered(
    fake_slack: FakeSlack, slack_channel, caplog
):
    """slack_sdk logs each failed reconnect (an ERROR and INFO lines, every ping interval):
    an outage is one degraded line (with the first reason) and one recovered line instead."""
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger=SOCKET_LOGGER)  # the demoted lines, counted
    channel, inbox = await _started(fake_slack, slack_channel)
    caplog.clear()
    await fake_slack.stop()
    failed = lambda: [r for r in caplog.records if r.msg.startswith("Failed to")]  # noqa: E731
    await wait_for(lambda: len(failed()) >= 2, timeout=30)
    await fake_slack.start()  # the same port: the SDK's next attempt finds it
    await wait_for(lambda: channel.connected, timeout=30)
    socket = [r for r in caplog.records if r.name == SOCKET_LOGGER]
    assert all(r.levelno == logging.DEBUG for r in socket), [r.getMessage() for r in socket]
    await wait_for(lambda: any("recovered" in r.getMessage() for r in caplog.records), 10)
    loud = [r for r in caplog.records if r.levelno >= logging.INFO]
    said = [r.getMessage() for r in loud]
    [degraded] = [m for m in said if "degraded" in m]
    assert "Socket Mode connection" in degraded and "Error" in degraded  # the first reason
    assert len([m for m in said if "recovered" in m]) == 1, said
    assert len(loud) == 2, said
    await fake_slack.wait_acked(await fake_slack.push(fake_slack.message("back?")))
    await inbox.wait(1)
