"""Streamed previews on Discord with the real discord.py against the fake: post + edit
that follow the rate-limit headers and never wait, the answer edited in place once."""

from __future__ import annotations

import time
from typing import Any

import pytest

from bot.errors import ChannelError, PreviewGone, PreviewRateLimited
from bot.messages import ChatKey, OutboundMessage
from channels.base import can_preview
from channels.discord import preview
from tests.fakes import discord_api
from tests.fakes.discord_api import DELETE, EDIT, POST, FakeDiscord

fake_discord = discord_api.fake_discord
discord_channel = discord_api.discord_channel

DM = ChatKey("discord", "4242")
OTHER = ChatKey("discord", "4343")
NO_PINGS: dict[str, list[str]] = {"parse": []}


def _texts(fake: FakeDiscord, channel_id: int) -> list[str]:
    return [m["content"] for m in fake.history.get(channel_id, [])]


async def test_preview_then_the_answer_in_the_same_message(
    discord_channel: Any, fake_discord: FakeDiscord
) -> None:
    channel, _ = await discord_channel()
    assert can_preview(channel) and channel.preview_limit(DM) == 2000
    asked = fake_discord.user_message("hello?", live=False)
    mid = await channel.post_preview(DM, "Hel", asked["id"])
    [post] = fake_discord.calls_to(POST)
    assert post.json["message_reference"]["message_id"] == int(asked["id"])
    assert post.json["allowed_mentions"] == NO_PINGS
    await channel.edit_preview(DM, mid, "Hello @everyone th")
    await channel.edit_preview(DM, mid, "Hello @everyone th")  # not modified: fine
    assert fake_discord.message(4242, mid)["content"] == "Hello @everyone th"

    msg = OutboundMessage(DM, "Hello @everyone there.", reply_to=asked["id"], preview_id=mid)
    assert (await channel.send(msg)).ids == (mid,)
    assert (await channel.send(msg)).ids == (mid,)  # the outbox's retry: still one message
    assert _texts(fake_discord, 4242) == ["hello?", "Hello @everyone there."]
    assert fake_discord.count(POST) == 1
    assert all(e.json["allowed_mentions"] == NO_PINGS for e in fake_discord.calls_to(EDIT))


async def test_a_final_the_preview_already_shows_costs_no_edit(
    discord_channel: Any, fake_discord: FakeDiscord
) -> None:
    channel, _ = await discord_channel()
    mid = await channel.post_preview(DM, "Hello", None)
    await channel.edit_preview(DM, mid, "Hello there.")
    edits = fake_discord.count(EDIT)
    sent = await channel.send(OutboundMessage(DM, "Hello there.", preview_id=mid))
    assert sent.ids == (mid,) and fake_discord.count(EDIT) == edits  # nothing to change
    assert _texts(fake_discord, 4242) == ["Hello there."]
    other = await channel.post_preview(DM, "Hello", None)  # a final that differs: edited
    await channel.send(OutboundMessage(DM, "Hello, world.", preview_id=other))
    assert fake_discord.count(EDIT) == edits + 1
    assert _texts(fake_discord, 4242) == ["Hello there.", "Hello, world."]


async def test_past_the_limit_the_preview_ends_at_the_cut_and_the_rest_follows(
    discord_channel: Any, fake_discord: FakeDiscord
) -> None:
    channel, _ = await discord_channel()
    text = "\n".join(["a" * 1500, "b" * 1500, "c" * 1500])
    mid = await channel.post_preview(DM, text[: channel.preview_limit(DM)], None)
    sent = await channel.send(OutboundMessage(DM, text, preview_id=mid))
    assert sent.ids[0] == mid and len(sent.ids) == 3
    assert [t[0] for t in _texts(fake_discord, 4242)] == ["a", "b", "c"]
    later = fake_discord.calls_to(POST)[1:]
    assert all(p.json.get("enforce_nonce") for p in later)  # the later parts land once


async def test_a_deleted_preview_gives_way_to_a_new_post(
    discord_channel: Any, fake_discord: FakeDiscord
) -> None:
    channel, _ = await discord_channel()
    mid = await channel.post_preview(DM, "soon", None)
    await channel.delete_preview(DM, mid)
    await channel.delete_preview(DM, mid)  # Unknown Message: already gone is fine
    assert fake_discord.count(DELETE) == 2 and _texts(fake_discord, 4242) == []
    with pytest.raises(PreviewGone):  # the turn previews no more
        await channel.edit_preview(DM, mid, "soon, more")
    sent = await channel.send(OutboundMessage(DM, "The answer.", preview_id=mid))
    assert _texts(fake_discord, 4242) == ["The answer."] and sent.ids != (mid,)


async def test_a_429_on_an_edit_is_raised_at_once_and_pauses_only_that_chat(
    discord_channel: Any, fake_discord: FakeDiscord
) -> None:
    channel, _ = await discord_channel()
    mine = await channel.post_preview(DM, "mine", None)
    theirs = await channel.post_preview(OTHER, "theirs", None)
    fake_discord.fail(EDIT, 429, retry_after=20)
    with pytest.raises(PreviewRateLimited) as caught:
        await channel.edit_preview(DM, mine, "mine grows")
    assert caught.value.retry_after == 20 and fake_discord.count(EDIT) == 1  # no retry
    with pytest.raises(PreviewRateLimited):  # paused: not even asked
        await channel.edit_preview(DM, mine, "mine grows more")
    assert fake_discord.count(EDIT) == 1
    await channel.edit_preview(OTHER, theirs, "theirs grows")  # another chat carries on
    await channel.send(OutboundMessage(OTHER, "theirs, done.", preview_id=theirs))
    await channel.send(OutboundMessage(DM, "mine, done.", preview_id=mine))  # never held up
    assert _texts(fake_discord, 4242) == ["mine, done."]
    assert _texts(fake_discord, 4343) == ["theirs, done."]


async def test_an_empty_bucket_is_respected_without_asking(
    discord_channel: Any, fake_discord: FakeDiscord
) -> None:
    channel, _ = await discord_channel()
    fake_discord.limit(EDIT, 2, per_s=30.0)
    mid = await channel.post_preview(DM, "a", None)
    other = await channel.post_preview(OTHER, "b", None)
    await channel.edit_preview(DM, mid, "a1")
    await channel.edit_preview(DM, mid, "a2")  # X-RateLimit-Remaining: 0 now
    with pytest.raises(PreviewRateLimited) as caught:
        await channel.edit_preview(DM, mid, "a3")
    assert 0 < caught.value.retry_after <= 30
    assert fake_discord.count(EDIT, channel_id=4242) == 2 and not fake_discord.rate_limited
    await channel.edit_preview(OTHER, other, "b1")  # its own bucket
    assert fake_discord.message(4343, other)["content"] == "b1"


async def test_a_429_without_via_is_no_rate_limit_and_a_global_one_pauses_previews(
    discord_channel: Any, fake_discord: FakeDiscord
) -> None:
    channel, _ = await discord_channel()
    mid = await channel.post_preview(DM, "a", None)
    fake_discord.fail(EDIT, 429, retry_after=5, via=False)
    with pytest.raises(ChannelError) as caught:
        await channel.edit_preview(DM, mid, "a1")
    assert not isinstance(caught.value, PreviewRateLimited)  # Cloudflare's: stop previewing
    fake_discord.fail(POST, 429, retry_after=15, global_=True)
    with pytest.raises(PreviewRateLimited):
        await channel.post_preview(OTHER, "b", None)
    with pytest.raises(PreviewRateLimited):  # every chat's previews wait for a global one
        await channel.edit_preview(DM, mid, "a2")
    await channel.send(OutboundMessage(DM, "a, done.", preview_id=mid))  # answers do not
    assert _texts(fake_discord, 4242) == ["a, done."]


async def test_groups_use_their_interval_and_never_below_a_second(
    discord_channel: Any,
) -> None:
    channel, _ = await discord_channel()
    group = ChatKey("discord", "555", "556")
    assert channel.preview_interval(group, 3.0) == 3.0
    assert channel.preview_interval(DM, 0.2) == 1.0


def test_buckets_already_reset_are_let_go_past_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """One bucket per route and channel: a bot in many channels keeps only those still
    counting once it holds more than BUCKETS_KEPT."""
    monkeypatch.setattr(preview, "BUCKETS_KEPT", 3)
    rest = preview.PreviewRest("token", "bot")
    now = time.monotonic()
    rest._keep(("POST", 1), preview._Bucket(0, now + 60))  # spent for another minute
    for channel_id in range(2, 12):
        rest._keep(("POST", channel_id), preview._Bucket(0, now - 1))  # reset already
        assert len(rest._buckets) <= 4
    assert ("POST", 1) in rest._buckets
