"""A delivery a dead run was posting is looked up in the channel's history, through the
real discord.py against the fake Discord, before it is posted again.

"The dead run" is a first DiscordChannel that posts (or starts to); "the restart" is a
fresh one that delivery tells the row is in doubt (``in_doubt``), then asks to send it.
The fake forgets nonces at once (``nonce_window_s = 0``): the restart came after
Discord's few minutes, so only the history lookup can keep a part from a second post.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from bot.errors import ChannelError
from bot.messages import ChatKey, OutboundMessage
from channels.base import can_lookup
from channels.discord.lookup import LOOKUP_LIMIT, LOOKUP_PAGES
from tests.fakes import discord_api
from tests.fakes.discord_api import DiscordFactory, FakeDiscord

fake_discord = discord_api.fake_discord
discord_channel = discord_api.discord_channel

POST = "POST /channels/{channel_id}/messages"
HISTORY = "GET /channels/{channel_id}/messages"
DM = ChatKey("discord", "4242")


@pytest.fixture(autouse=True)
def _nonces_forgotten(fake_discord: FakeDiscord) -> None:
    fake_discord.nonce_window_s = 0.0


def _answer(fake: FakeDiscord, text: str) -> OutboundMessage:
    """The reply to a user's message in the DM (queued now)."""
    asked = fake.user_message("a question", live=False)
    return OutboundMessage(DM, text, reply_to=str(asked["id"]), idempotency_key=f"reply:{text[:9]}")


async def _after_restart(
    discord_channel: DiscordFactory, msg: OutboundMessage, queued: float
) -> tuple[str, ...]:
    """A fresh channel told ``msg`` was in doubt since ``queued``; what its send returns."""
    restarted, _ = await discord_channel()
    assert can_lookup(restarted)
    await restarted.in_doubt(msg, datetime.fromtimestamp(queued, UTC))
    return (await restarted.send(msg)).ids


async def test_a_post_that_landed_is_found_not_posted_again(
    discord_channel: DiscordFactory, fake_discord: FakeDiscord
) -> None:
    dead, _ = await discord_channel()
    msg, queued = _answer(fake_discord, "The answer."), time.time()
    landed = await dead.send(msg)
    ids = await _after_restart(discord_channel, msg, queued)
    assert ids == landed.ids
    assert len(fake_discord.posts()) == 1
    assert len(fake_discord.calls_to(HISTORY)) == 1


async def test_a_post_that_never_went_out_is_posted(
    discord_channel: DiscordFactory, fake_discord: FakeDiscord
) -> None:
    msg = _answer(fake_discord, "Yes.")
    other = fake_discord.user_message("another question", live=False)
    before = time.time() - 60  # the same words, said before this row was queued
    fake_discord.user_message("Yes.", live=False, author=fake_discord.mention_of_bot(), at=before)
    fake_discord.user_message(  # the same words answering another message
        "Yes.",
        live=False,
        author=fake_discord.mention_of_bot(),
        referenced_message=other,
    )
    ids = await _after_restart(discord_channel, msg, time.time() - 1)
    [post] = fake_discord.posts()
    assert post.json["content"] == "Yes." and len(ids) == 1
    assert str(post.json["message_reference"]["message_id"]) == msg.reply_to


async def test_only_the_parts_missing_are_posted(
    discord_channel: DiscordFactory, fake_discord: FakeDiscord
) -> None:
    dead, _ = await discord_channel()
    text = "\n".join(["a" * 1500, "b" * 1500, "c" * 1500])
    msg, queued = _answer(fake_discord, text), time.time()
    fake_discord.fail(POST, 429, via=False, after=2)  # the dead run posted two of three
    with pytest.raises(ChannelError):
        await dead.send(msg)
    first_two = [str(m["id"]) for m in fake_discord.created]
    ids = await _after_restart(discord_channel, msg, queued)
    assert [str(m["content"])[0] for m in fake_discord.created] == ["a", "b", "c"]
    assert list(ids[:2]) == first_two and len(ids) == 3
    assert len(fake_discord.posts()) == 3  # parts a and b once, c once
    assert len(fake_discord.calls_to(HISTORY)) == 1


async def test_one_post_is_found_for_one_of_two_answers_with_the_same_text(
    discord_channel: DiscordFactory, fake_discord: FakeDiscord
) -> None:
    """Two reminders saying the same were in doubt; the dead run had posted one: the
    restart finds it for the first and posts the second, never one post for both."""
    first, second = (
        OutboundMessage(DM, "Stretch!", idempotency_key=f"reminder:{n}") for n in (1, 2)
    )
    dead, _ = await discord_channel()
    queued = time.time()
    [landed] = (await dead.send(first)).ids
    restarted, _ = await discord_channel()
    for msg in (first, second):
        await restarted.in_doubt(msg, datetime.fromtimestamp(queued, UTC))
    assert (await restarted.send(first)).ids == (landed,)
    [posted] = (await restarted.send(second)).ids
    assert posted != landed
    assert [str(m["content"]) for m in fake_discord.created] == ["Stretch!", "Stretch!"]


@pytest.mark.parametrize("others", [LOOKUP_LIMIT * LOOKUP_PAGES - 2, LOOKUP_LIMIT * LOOKUP_PAGES])
async def test_the_history_read_is_bounded(
    discord_channel: DiscordFactory, fake_discord: FakeDiscord, others: int
) -> None:
    """The post in doubt after ``others`` messages: found within the bound (three pages
    of 100, oldest first after the row was queued), posted again past it."""
    queued = time.time() - 5
    msg = _answer(fake_discord, "Found?")
    for i in range(others):  # a busy channel between the queueing and the post
        fake_discord.user_message(f"chatter {i}", live=False, at=queued + 0.001 * (i + 1))
    dead, _ = await discord_channel()
    await dead.send(msg)
    await _after_restart(discord_channel, msg, queued)
    within = others + 2 <= LOOKUP_LIMIT * LOOKUP_PAGES  # the question and the answer too
    assert len(fake_discord.posts()) == (1 if within else 2)
    assert len(fake_discord.calls_to(HISTORY)) == LOOKUP_PAGES


async def test_unreadable_history_posts_rather_than_loses(
    discord_channel: DiscordFactory, fake_discord: FakeDiscord
) -> None:
    """Without Read Message History the lookup is impossible: the part is posted (the
    nonce still covers Discord's few minutes); any other failure is retried instead."""
    msg = _answer(fake_discord, "Posted.")
    fake_discord.fail(HISTORY, 429, via=False)  # not a rate limit: a server-side refusal
    restarted, _ = await discord_channel()
    await restarted.in_doubt(msg, datetime.now(UTC))
    with pytest.raises(ChannelError):
        await restarted.send(msg)
    assert not fake_discord.posts()
    fake_discord.fail(HISTORY, 403)
    await restarted.send(msg)
    assert [p.json["content"] for p in fake_discord.posts()] == ["Posted."]
