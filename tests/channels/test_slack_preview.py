"""Streamed previews on Slack through the real slack_sdk / slack-bolt: a native stream in
threads, post + chat.update elsewhere (and where the workspace does not stream), the
answer edited in place exactly once, and one budget per workspace."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bot.errors import ChannelError, PreviewGone, PreviewRateLimited
from bot.messages import ChatKey, OutboundMessage
from channels.base import can_preview
from tests.fakes import slack_api
from tests.fakes.slack_api import TEAM, USER, FakeSlack, RoutesServer, post_signed

fake_slack = slack_api.fake_slack
slack_channel = slack_api.slack_channel

DM = ChatKey("slack", "D0DM")
STREAMS = ("chat.startStream", "chat.appendStream", "chat.stopStream")


async def _asked_in_thread(fake_slack: FakeSlack, slack_channel: Any, **kw: Any) -> Any:
    """A channel mention over Socket Mode: the answer's thread and who asked are known."""
    channel, inbox = await slack_channel(**kw)
    await fake_slack.wait_socket()
    await fake_slack.push(fake_slack.mention("what is up?"))
    [msg] = await inbox.wait(1)
    return channel, msg


def _final(msg: Any, text: str, preview_id: str) -> OutboundMessage:
    return OutboundMessage.reply(msg, text, preview_id=preview_id)


async def test_a_thread_answer_streams_natively_then_stops_in_place(
    fake_slack: FakeSlack, slack_channel: Any
) -> None:
    channel, asked = await _asked_in_thread(fake_slack, slack_channel)
    assert can_preview(channel)
    key = asked.key
    ts = await channel.post_preview(key, "The answer", asked.message_id)
    await channel.edit_preview(key, ts, "The answer is")
    await channel.edit_preview(key, ts, "The answer is")  # nothing new: no call
    await channel.edit_preview(key, ts, "The answer is forty")
    [start] = fake_slack.calls_to("chat.startStream")
    assert start.params["thread_ts"] == key.thread_id
    assert (start.params["recipient_team_id"], start.params["recipient_user_id"]) == (TEAM, USER)
    appended = [c.params["markdown_text"] for c in fake_slack.calls_to("chat.appendStream")]
    assert appended == [" is", " forty"]

    final = _final(asked, "The answer is forty-two.", ts)
    sent = await channel.send(final)
    assert sent.ids == (ts,)
    [stop] = fake_slack.calls_to("chat.stopStream")
    assert stop.params["markdown_text"] == "-two."
    [post] = fake_slack.posts(key.chat_id)
    assert post["ts"] == ts and post["text"] == "The answer is forty-two."
    assert fake_slack.count("chat.postMessage", "chat.update") == 0
    # The finalized preview carries the delivery key: a lost send is found, not re-posted.
    assert await channel.sender.find(key, f"{final.delivery_key}#0", float(ts)) == ts
    await channel.send(final)  # the outbox's retry after a crash: the same one message
    assert [p["text"] for p in fake_slack.posts(key.chat_id)] == ["The answer is forty-two."]


async def test_a_stream_cannot_take_text_back_so_it_becomes_an_edited_message(
    fake_slack: FakeSlack, slack_channel: Any
) -> None:
    channel, asked = await _asked_in_thread(fake_slack, slack_channel)
    ts = await channel.post_preview(asked.key, "checking the weather…", None)
    await channel.edit_preview(asked.key, ts, "It is sunny")  # the status line replaced
    assert len(fake_slack.calls_to("chat.stopStream")) == 1
    await channel.edit_preview(asked.key, ts, "It is sunny and warm")
    assert [c.params["text"] for c in fake_slack.calls_to("chat.update")] == [
        "It is sunny",
        "It is sunny and warm",
    ]
    await channel.send(_final(asked, "It is **sunny** and warm.", ts))
    [post] = fake_slack.posts(asked.key.chat_id)
    assert post["text"] == "It is *sunny* and warm." and post["metadata"]["event_type"]
    assert len(fake_slack.calls_to("chat.stopStream")) == 1  # not stopped twice


async def test_a_workspace_without_streams_posts_and_updates_over_http_events(
    fake_slack: FakeSlack, slack_channel: Any
) -> None:
    fake_slack.streaming = False
    channel, inbox = await slack_channel(app_token="", signing_secret=fake_slack.signing_secret)
    server = RoutesServer(channel.routes())
    await server.start()
    try:
        for text in ("first", "second"):
            body = fake_slack.body(fake_slack.mention(text))
            assert (await post_signed(server.url(), body, fake_slack.signing_secret))[0] == 200
        first, second = await inbox.wait(2)
    finally:
        await server.stop()
    ts = await channel.post_preview(first.key, "Half an", None)
    await channel.edit_preview(first.key, ts, "Half an answer")
    other = await channel.post_preview(second.key, "Another", None)
    assert len(fake_slack.calls_to("chat.startStream")) == 1  # asked once per workspace
    [update] = fake_slack.calls_to("chat.update")
    assert (update.params["ts"], update.params["text"]) == (ts, "Half an answer")
    await channel.send(_final(first, "Half an answer, and the rest.", ts))
    await channel.send(_final(second, "Another answer.", other))
    posts = fake_slack.posts("C0GENERAL")
    assert [p["text"] for p in posts] == ["Half an answer, and the rest.", "Another answer."]
    assert all(p["metadata"]["event_type"] == "bot_delivery" for p in posts)


async def test_a_dm_preview_is_a_posted_message_edited_in_place(
    fake_slack: FakeSlack, slack_channel: Any
) -> None:
    channel, _ = await slack_channel(app_token="", signing_secret="s")
    ts = await channel.post_preview(DM, "Hello", None)
    await channel.edit_preview(DM, ts, "Hello the")
    msg = OutboundMessage(DM, "Hello there.", preview_id=ts, idempotency_key="reply:dm:1")
    assert (await channel.send(msg)).ids == (ts,)
    assert fake_slack.count(*STREAMS) == 0
    [post] = fake_slack.posts("D0DM")
    assert post["text"] == "Hello there." and post["metadata"]["event_payload"] == {
        "key": "reply:dm:1#0"
    }


async def test_a_long_answer_ends_the_preview_at_the_cut_and_continues_in_order(
    fake_slack: FakeSlack, slack_channel: Any
) -> None:
    channel, _ = await slack_channel(app_token="", signing_secret="s")
    text = "\n\n".join(f"part {i} " + "word " * 500 for i in range(3))
    limit = channel.preview_limit(DM)
    ts = await channel.post_preview(DM, text[:limit], None)
    msg = OutboundMessage(DM, text, preview_id=ts)
    sent = await channel.send(msg)
    posts = fake_slack.posts("D0DM")
    assert [p["text"].split()[:2] for p in posts] == [["part", "0"], ["part", "1"], ["part", "2"]]
    assert sent.ids[0] == ts and sent.ids == tuple(p["ts"] for p in posts)
    # A crash before the sent mark: the retry edits again and finds the later parts.
    await channel.in_doubt(msg, datetime.fromtimestamp(float(ts), UTC))
    assert (await channel.send(msg)).ids == sent.ids and len(fake_slack.posts("D0DM")) == 3


async def test_a_preview_deleted_meanwhile_gives_way_to_a_new_post(
    fake_slack: FakeSlack, slack_channel: Any
) -> None:
    channel, _ = await slack_channel(app_token="", signing_secret="s")
    ts = await channel.post_preview(DM, "soon", None)
    await channel.delete_preview(DM, ts)
    await channel.delete_preview(DM, ts)  # already gone: fine
    assert fake_slack.find("D0DM", ts) is None
    with pytest.raises(PreviewGone):  # the turn previews no more
        await channel.edit_preview(DM, ts, "soon, more")
    sent = await channel.send(OutboundMessage(DM, "The answer.", preview_id=ts))
    [post] = fake_slack.posts("D0DM")
    assert post["text"] == "The answer." and sent.ids == (post["ts"],) != (ts,)


async def test_a_429_on_an_edit_is_raised_at_once_and_holds_up_no_other_chat(
    fake_slack: FakeSlack, slack_channel: Any
) -> None:
    channel, _ = await slack_channel(app_token="", signing_secret="s")
    ts = await channel.post_preview(DM, "Growing", None)
    fake_slack.fail("chat.update", 429, retry_after=20)
    with pytest.raises(PreviewRateLimited) as caught:
        await channel.edit_preview(DM, ts, "Growing text")
    assert caught.value.retry_after == 20
    assert len(fake_slack.calls_to("chat.update")) == 1  # no retry inside the call
    with pytest.raises(PreviewRateLimited):  # the workspace's budget waits it out
        await channel.edit_preview(DM, ts, "Growing text more")
    assert len(fake_slack.calls_to("chat.update")) == 1
    other = ChatKey("slack", "D0OTHER")
    await channel.send(OutboundMessage(other, "Another chat's answer."))
    await channel.send(OutboundMessage(DM, "Growing text, done.", preview_id=ts))
    texts = [p["text"] for p in fake_slack.posts()]
    assert texts == ["Growing text, done.", "Another chat's answer."]


async def test_the_budget_is_per_workspace_and_spread_over_its_previews(
    fake_slack: FakeSlack, slack_channel: Any
) -> None:
    channel, _ = await slack_channel(app_token="", signing_secret="s")
    assert channel.preview_interval(DM, 1.0) == pytest.approx(1.2)  # Tier 3: 50 a minute
    ts = await channel.post_preview(DM, "one", None)
    other = ChatKey("slack", "D0OTHER")
    await channel.post_preview(other, "two", None)
    assert channel.preview_interval(DM, 1.0) == pytest.approx(2.4)  # two share the bucket
    assert channel.preview_interval(DM, 3.0) == 3.0
    # A model faster than any interval: the edits over budget never reach Slack.
    refused = 0
    for n in range(40):
        try:
            await channel.edit_preview(DM, ts, "one" + "!" * (n + 1))
        except PreviewRateLimited as exc:
            assert 0 < exc.retry_after <= 1.2
            refused += 1
    assert fake_slack.count("chat.postMessage", "chat.update") <= 4 and refused >= 38


def test_a_workspace_budget_over_a_minute_of_a_fast_model() -> None:
    """Asked 20 times a second for a minute, a workspace makes Slack's 50 updates (plus
    the burst) and no more."""
    from channels.slack.budget import BURST, Budget

    now = [0.0]
    budget = Budget(50, clock=lambda: now[0])
    allowed = 0
    for _ in range(20 * 60):
        now[0] += 0.05
        allowed += budget.take() == 0.0
    assert 50 <= allowed <= 50 + BURST
    budget.pause(30)
    assert budget.take() >= 30 - 0.05


async def test_a_stream_slack_will_not_stop_is_still_edited_into_the_answer(
    fake_slack: FakeSlack, slack_channel: Any
) -> None:
    channel, asked = await _asked_in_thread(fake_slack, slack_channel)
    ts = await channel.post_preview(asked.key, "Stopped by the", None)
    fake_slack.fail("chat.appendStream", 200, "stopped_by_user")  # the user pressed stop
    with pytest.raises(ChannelError):
        await channel.edit_preview(asked.key, ts, "Stopped by the user")
    fake_slack.fail("chat.stopStream", 200, "stopped_by_user")
    assert (await channel.send(_final(asked, "Stopped by the user, answered.", ts))).ids == (ts,)
    [post] = fake_slack.posts(asked.key.chat_id)
    assert post["text"] == "Stopped by the user, answered." and post["metadata"]


async def test_after_a_restart_a_live_stream_is_finished_or_its_orphan_deleted(
    fake_slack: FakeSlack, slack_channel: Any
) -> None:
    dead, asked = await _asked_in_thread(fake_slack, slack_channel)
    ts = await dead.post_preview(asked.key, "Half of", None)
    orphan = await dead.post_preview(asked.key, "An orphan", None)
    await dead.stop()  # SIGKILL: the streams stay open at Slack, their state is gone
    channel, _ = await slack_channel(app_token="", signing_secret="s")
    await channel.delete_preview(asked.key, orphan)
    assert (await channel.send(_final(asked, "Half of the answer.", ts))).ids == (ts,)
    [post] = fake_slack.posts(asked.key.chat_id)
    assert post["ts"] == ts and post["text"] == "Half of the answer."
    assert not fake_slack.streams and post["metadata"]["event_type"] == "bot_delivery"
