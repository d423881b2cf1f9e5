"""A huge answer is not posted as hundreds of messages: the text is capped per answer,
the whole of it attached as a file where the channel can upload, else cut with a note."""

from __future__ import annotations

from bot.delivery import deliver
from bot.messages import ChatKey, OutboundMessage
from tests.conftest import DaemonFactory
from tests.fakes import discord_api
from tests.fakes.llm_server import FakeLLM

fake_discord = discord_api.fake_discord
discord_channel = discord_api.discord_channel

DM = ChatKey("discord", "4242")
HUGE = "".join(f"line {i}: " + "words " * 10 + "\n" for i in range(5_000))  # ~340,000 chars


async def test_a_huge_answer_is_cut_with_a_note_where_nothing_can_be_uploaded(
    daemon_factory: DaemonFactory, fake_llm: FakeLLM
) -> None:
    _, chat = await daemon_factory(agent={"max_answer_chars": 2_000})
    fake_llm.reply_tool_calls([("final_result", {"answer": HUGE})])
    reply = await chat.ask("write a lot")
    assert len(chat.sent) == 1
    assert len(reply.text) <= 2_000
    assert reply.text.startswith("line 0: words")
    assert "answer was cut" in reply.text and f"{len(HUGE):,}" in reply.text


async def test_a_huge_answer_is_attached_whole_where_the_channel_uploads(
    discord_channel, fake_discord
) -> None:
    channel, _ = await discord_channel()
    sent = await deliver(channel, OutboundMessage(DM, HUGE, reply_to="1"), max_chars=3_000)
    posts = fake_discord.posts(channel_id=4242)
    assert len(posts) == 3 and len(sent.ids) == 3  # 3,000 characters in 2 posts + the file
    text = "".join(p.json.get("content", "") for p in posts[:2])
    assert text.startswith("line 0: words") and "all of it is in answer.md" in text
    assert posts[2].files == {"answer.md": HUGE.encode()}


async def test_an_answer_within_the_cap_is_sent_as_it_is(discord_channel, fake_discord) -> None:
    channel, _ = await discord_channel()
    await deliver(channel, OutboundMessage(DM, "short", reply_to="1"), max_chars=3_000)
    (post,) = fake_discord.posts(channel_id=4242)
    assert post.json["content"] == "short" and not post.files
