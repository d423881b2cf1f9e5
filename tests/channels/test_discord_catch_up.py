"""What was said on Discord while the bot was away is read back from each conversation's
history (the real discord.py against the fake's REST history), handed on once, in order,
within the window, through the same filters as live messages."""

from __future__ import annotations

import time
from datetime import timedelta

from channels.base import CAUGHT_UP, CatchUpWindow
from tests.fakes import discord_api
from tests.fakes.discord_api import DiscordFactory, FakeDiscord, user
from tests.fakes.slack_api import MemoryState

fake_discord = discord_api.fake_discord
discord_channel = discord_api.discord_channel
WINDOW = CatchUpWindow(timedelta(hours=24), max_messages=5)


def texts(inbox: discord_api.Inbox) -> list[str]:
    return [m.text for m in inbox.messages]


async def test_dm_messages_said_while_down_are_handed_on_in_order(
    fake_discord: FakeDiscord, discord_channel: DiscordFactory
) -> None:
    state = MemoryState()
    first, inbox = await discord_channel(state=state, window=WINDOW)
    fake_discord.user_message("before")
    await inbox.wait(1)
    await first.stop()
    fake_discord.user_message("while down 1", live=False)
    fake_discord.user_message("while down 2", live=False)

    _, again = await discord_channel(state=state, window=WINDOW)
    await again.wait(2)
    assert texts(again) == ["while down 1", "while down 2"]
    assert all(m.extras[CAUGHT_UP] for m in again.messages)
    fake_discord.user_message("live after")
    await again.wait(3)
    assert texts(again)[2] == "live after" and CAUGHT_UP not in again.messages[2].extras


async def test_in_a_server_only_what_is_addressed_to_the_bot_by_people_is_caught_up(
    fake_discord: FakeDiscord, discord_channel: DiscordFactory
) -> None:
    guild = fake_discord.add_guild()
    cid = fake_discord.channel_of(guild)
    state = MemoryState()
    mention = f"<@{fake_discord.bot_id}>"
    first, inbox = await discord_channel(state=state, window=WINDOW)
    fake_discord.user_message(f"{mention} hello", channel_id=cid, guild_id=guild,
                              mentions=(fake_discord.mention_of_bot(),))  # fmt: skip
    await inbox.wait(1)
    await first.stop()
    fake_discord.user_message("chatter", channel_id=cid, guild_id=guild, live=False)
    fake_discord.user_message(f"{mention} from a bot", channel_id=cid, guild_id=guild,
                              author=user(99, "otherbot", bot=True),
                              mentions=(fake_discord.mention_of_bot(),), live=False)  # fmt: skip
    fake_discord.user_message(f"{mention} missed question", channel_id=cid, guild_id=guild,
                              mentions=(fake_discord.mention_of_bot(),), live=False)  # fmt: skip

    _, again = await discord_channel(state=state, window=WINDOW)
    await again.wait(1)
    fake_discord.user_message("a DM barrier")  # live: handled after the catch-up
    await again.wait(2)
    assert texts(again) == ["missed question", "a DM barrier"]
    [caught] = [m for m in again.messages if m.extras.get(CAUGHT_UP)]
    assert caught.key.chat_id == str(cid) and caught.extras["guild_id"] == str(guild)


async def test_the_catch_up_is_bounded_by_count_and_age(
    fake_discord: FakeDiscord, discord_channel: DiscordFactory
) -> None:
    state = MemoryState()
    two_days = time.time() - 48 * 3600
    first, inbox = await discord_channel(state=state, window=WINDOW)
    fake_discord.user_message("seen long ago", at=two_days)
    await inbox.wait(1)
    await first.stop()
    fake_discord.user_message("too old", at=two_days + 60, live=False)
    for n in range(8):
        fake_discord.user_message(f"recent {n}", live=False)

    _, again = await discord_channel(state=state, window=WINDOW)
    await again.wait(5)
    assert texts(again) == [f"recent {n}" for n in range(3, 8)]  # the latest five, in order


async def test_messages_lost_with_an_invalidated_gateway_session_are_caught_up(
    fake_discord: FakeDiscord, discord_channel: DiscordFactory
) -> None:
    """A fresh IDENTIFY starts a new session: the gateway replays nothing of the old."""
    _, inbox = await discord_channel(state=MemoryState(), window=WINDOW)
    fake_discord.user_message("before")
    await inbox.wait(1)
    await fake_discord.invalidate()
    fake_discord.user_message("during the gap")  # no live session: never pushed again
    await inbox.wait(2)
    assert texts(inbox) == ["before", "during the gap"]
    assert len(fake_discord.ops(2)) == 2  # it did IDENTIFY afresh


async def test_without_a_window_nothing_is_read_back(
    fake_discord: FakeDiscord, discord_channel: DiscordFactory
) -> None:
    state = MemoryState()
    first, inbox = await discord_channel(state=state)
    fake_discord.user_message("before")
    await inbox.wait(1)
    await first.stop()
    fake_discord.user_message("while down", live=False)
    _, again = await discord_channel(state=state)
    fake_discord.user_message("live")
    await again.wait(1)
    assert texts(again) == ["live"]
    assert not fake_discord.calls_to("GET /channels/{channel_id}/messages")
