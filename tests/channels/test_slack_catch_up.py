"""What was said on Slack while the bot was away is read back after a start (real
slack_sdk against the fake Web API's conversations.history / conversations.replies):
once, in order per conversation, within the window, filtered as live events are."""

from __future__ import annotations

import time
from datetime import timedelta

from channels.base import CAUGHT_UP, CatchUpWindow
from tests.fakes import slack_api
from tests.fakes.slack_api import BOT_ID, BOT_USER, ChannelFactory, FakeSlack, Inbox, MemoryState

fake_slack = slack_api.fake_slack
slack_channel = slack_api.slack_channel
WINDOW = CatchUpWindow(timedelta(hours=24), max_messages=5)


async def say(fake: FakeSlack, text: str, **kw: object) -> None:
    await fake.wait_acked(await fake.push(fake.message(text, **kw)))  # type: ignore[arg-type]


def texts(inbox: Inbox) -> list[str]:
    return [m.text for m in inbox.accepted]


async def test_dm_messages_said_while_down_are_handed_on_in_order_before_live_ones(
    fake_slack: FakeSlack, slack_channel: ChannelFactory
) -> None:
    state = MemoryState()
    first, inbox = await slack_channel(state=state, window=WINDOW)
    await say(fake_slack, "before")
    await inbox.wait(1)
    await first.stop()
    fake_slack.add_message("while down 1")
    fake_slack.add_message("while down 2")
    fake_slack.add_message("from a bot", user="", bot_id="B0OTHER")

    _, again = await slack_channel(state=state, window=WINDOW)
    await say(fake_slack, "live after")
    await again.wait(3)
    assert texts(again) == ["while down 1", "while down 2", "live after"]
    assert [bool(m.extras.get(CAUGHT_UP)) for m in again.accepted] == [True, True, False]


async def test_mentions_in_channels_and_replies_in_the_bots_threads_are_caught_up(
    fake_slack: FakeSlack, slack_channel: ChannelFactory
) -> None:
    state = MemoryState()
    first, inbox = await slack_channel(state=state, window=WINDOW)
    opening = fake_slack.mention("open a thread")
    await fake_slack.wait_acked(await fake_slack.push(opening))
    await inbox.wait(1)
    await first.stop()
    fake_slack.add_message("chatter", channel="C0GENERAL")
    fake_slack.add_message("in the thread", channel="C0GENERAL", thread_ts=opening["ts"])
    fake_slack.add_message("my answer", channel="C0GENERAL", thread_ts=opening["ts"],
                           user=BOT_USER, bot_id=BOT_ID)  # fmt: skip
    fake_slack.add_message(f"<@{BOT_USER}> a new question", channel="C0GENERAL")

    _, again = await slack_channel(state=state, window=WINDOW)
    await again.wait(2)
    await say(fake_slack, "barrier")
    await again.wait(3)
    by_text = {m.text: m for m in again.accepted}
    assert set(by_text) == {"in the thread", "a new question", "barrier"}
    assert by_text["in the thread"].key.thread_id == opening["ts"]
    assert by_text["a new question"].extras[CAUGHT_UP]


async def test_the_catch_up_is_bounded_by_count_and_age(
    fake_slack: FakeSlack, slack_channel: ChannelFactory
) -> None:
    state = MemoryState()
    two_days = time.time() - 48 * 3600
    first, inbox = await slack_channel(state=state, window=WINDOW)
    seen = fake_slack.message("seen long ago", ts=f"{two_days:.6f}")
    await fake_slack.wait_acked(await fake_slack.push(seen))
    await inbox.wait(1)
    await first.stop()
    fake_slack.add_message("too old", ts=f"{two_days + 60:.6f}")
    for n in range(8):
        fake_slack.add_message(f"recent {n}")

    _, again = await slack_channel(state=state, window=WINDOW)
    await again.wait(5)
    await say(fake_slack, "barrier")
    await again.wait(6)
    assert texts(again) == [*(f"recent {n}" for n in range(3, 8)), "barrier"]
