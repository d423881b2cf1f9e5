"""Inbound: the real discord.py parses gateway dispatches from the fake Discord, and the
adapter decides what becomes a turn (DMs, mentions, replies, threads) and how it is keyed."""

from __future__ import annotations

from typing import Any

from bot.messages import ChatKey, OutboundMessage
from tests.fakes import discord_api
from tests.fakes.discord_api import DiscordFactory, FakeDiscord, user
from tests.fakes.waiting import until

fake_discord = discord_api.fake_discord
discord_channel = discord_api.discord_channel


async def test_dm_turn_through_the_adapter(discord_channel: DiscordFactory, fake_discord):
    channel, inbox = await discord_channel()
    assert channel.connected
    sent = fake_discord.user_message("hello there", channel_id=4242)
    [msg] = await inbox.wait(1)
    assert msg.key == ChatKey("discord", "4242")
    assert msg.text == "hello there"
    assert msg.user_id == "7" and msg.sender == "discord:7"
    assert msg.message_id == sent["id"]  # Discord's id: redeliveries dedup in the inbox
    assert msg.extras["workspace_key"] == "discord:dm"
    assert msg.direct
    result = await channel.send(OutboundMessage(msg.key, "hi!", reply_to=msg.message_id))
    [post] = await fake_discord.wait_posts(1, channel_id=4242)
    assert post.json["content"] == "hi!"
    assert str(post.json["message_reference"]["message_id"]) == sent["id"]
    assert post.json["message_reference"]["fail_if_not_exists"] is False
    assert len(result.ids) == 1 and result.ids[0].isdigit()


async def _only_sentinel(fake: FakeDiscord, inbox, channel, before: int = 0) -> None:
    """Everything pushed before a final DM has been handled once that DM arrives and no
    conversation has a message in hand (each is handled in arrival order, conversations
    side by side): then assert nothing else became a turn."""
    sentinel = fake.user_message("sentinel", channel_id=4242)
    await inbox.wait(before + 1)
    await until(lambda: channel.handling == 0, 10)
    assert [m.message_id for m in inbox.messages[before:]] == [sentinel["id"]]


async def test_guild_mention_is_a_turn_and_chatter_is_not(discord_channel, fake_discord):
    gid = fake_discord.add_guild()
    cid = fake_discord.channel_of(gid)
    channel, inbox = await discord_channel()
    fake_discord.user_message("just chatting", guild_id=gid, channel_id=cid)
    await _only_sentinel(fake_discord, inbox, channel)
    me = fake_discord.bot_user
    bob = user(8, "bob")
    fake_discord.user_message(
        f"<@{fake_discord.bot_id}> what's up with <@8>?",
        guild_id=gid,
        channel_id=cid,
        mentions=(me, bob),
    )
    msg = (await inbox.wait(2))[1]
    assert msg.key == ChatKey("discord", str(cid))
    assert msg.text == "what's up with @Bob?"
    assert msg.extras["workspace_key"] == f"discord:{gid}"
    assert msg.extras["chat_type"] == "guild"
    assert not msg.direct
    assert msg.extras["chat_title"] == "general"
    fake_discord.user_message(
        f"<@{fake_discord.bot_id}>", guild_id=gid, channel_id=cid, mentions=(me,)
    )
    assert (await inbox.wait(3))[2].text == "@Testbot"  # a bare mention is not an empty turn


async def test_a_sticker_or_a_poll_sent_with_words_reaches_the_model_with_them(
    discord_channel, fake_discord
):
    """Only a message with no words had its sticker or poll described: "@Bot lol" + a
    sticker reached the model as "lol", "@Bot" + a poll as the bare mention."""
    gid = fake_discord.add_guild()
    where = {"guild_id": gid, "channel_id": fake_discord.channel_of(gid)}
    _, inbox = await discord_channel()
    me = (fake_discord.bot_user,)
    wave = [{"id": "1", "name": "Wumpus Wave", "format_type": 1}]
    fake_discord.user_message(f"<@{fake_discord.bot_id}> lol", mentions=me, sticker_items=wave,
                              **where)  # fmt: skip
    poll = {"question": {"text": "Lunch?"}, "allow_multiselect": False, "layout_type": 1,
            "expiry": "2030-01-01T00:00:00+00:00",
            "answers": [{"answer_id": 1, "poll_media": {"text": "Pizza"}},
                        {"answer_id": 2, "poll_media": {"text": "Sushi"}}]}  # fmt: skip
    fake_discord.user_message(f"<@{fake_discord.bot_id}>", mentions=me, poll=poll, **where)
    fake_discord.user_message(f"<@{fake_discord.bot_id}> which?", mentions=me, poll=poll, **where)
    said = [m.text for m in await inbox.wait(3)]
    assert said == [
        "lol\n[sticker Wumpus Wave]",
        "[poll: Lunch? — Pizza / Sushi]",
        "which?\n[poll: Lunch? — Pizza / Sushi]",
    ]


async def test_everyone_here_and_role_mentions_do_not_address_the_bot(
    discord_channel, fake_discord
):
    gid = fake_discord.add_guild()
    cid = fake_discord.channel_of(gid)
    role = fake_discord.add_role(gid, "bots")
    channel, inbox = await discord_channel()
    where = {"guild_id": gid, "channel_id": cid}
    fake_discord.user_message("@everyone party!", mention_everyone=True, **where)
    fake_discord.user_message("@here anyone?", mention_everyone=True, **where)
    fake_discord.user_message(f"<@&{role}> ping", mention_roles=[str(role)], **where)
    await _only_sentinel(fake_discord, inbox, channel)


async def test_reply_to_the_bot_is_a_turn_with_context(discord_channel, fake_discord):
    gid = fake_discord.add_guild()
    cid = fake_discord.channel_of(gid)
    channel, inbox = await discord_channel()
    earlier = fake_discord.bot_said("It is sunny.", cid)
    other = fake_discord.message_payload("I like rain", channel_id=cid, author=user(8, "bob"))
    fake_discord.user_message("me too", guild_id=gid, channel_id=cid, referenced_message=other)
    await _only_sentinel(fake_discord, inbox, channel)
    fake_discord.user_message(
        "and tomorrow?", guild_id=gid, channel_id=cid, referenced_message=earlier
    )
    msg = (await inbox.wait(2))[1]
    assert msg.text == "> replying to you (the bot): It is sunny.\nand tomorrow?"
    assert msg.extras["reply_to"]["message_id"] == earlier["id"]


async def test_thread_messages_are_keyed_by_parent_and_thread(discord_channel, fake_discord):
    gid = fake_discord.add_guild()
    cid = fake_discord.channel_of(gid)
    joined = fake_discord.add_thread(gid, cid, bot_member=True)
    other = fake_discord.add_thread(gid, cid, bot_member=False)
    channel, inbox = await discord_channel()
    fake_discord.user_message("nobody asked you", guild_id=gid, channel_id=other)
    await _only_sentinel(fake_discord, inbox, channel)
    fake_discord.user_message("in our thread", guild_id=gid, channel_id=joined)
    msg = (await inbox.wait(2))[1]
    assert msg.key == ChatKey("discord", str(cid), str(joined))
    assert msg.extras["chat_type"] == "thread"
    await channel.send(OutboundMessage(msg.key, "answer", reply_to=msg.message_id))
    [post] = await fake_discord.wait_posts(1, channel_id=joined)  # into the thread itself
    assert int(post.json["message_reference"]["channel_id"]) == joined
    # Once the bot has posted in a thread, it is part of it: no mention needed there.
    await channel.send(OutboundMessage(ChatKey("discord", str(cid), str(other)), "hello"))
    fake_discord.user_message("now you are here", guild_id=gid, channel_id=other)
    msg = (await inbox.wait(3))[2]
    assert msg.key == ChatKey("discord", str(cid), str(other))


async def test_group_policy_all_takes_every_server_message(discord_channel, fake_discord):
    gid = fake_discord.add_guild()
    cid = fake_discord.channel_of(gid)
    _, inbox = await discord_channel(group_policy="all")
    fake_discord.user_message("just chatting", guild_id=gid, channel_id=cid)
    [msg] = await inbox.wait(1)
    assert msg.text == "just chatting"


async def test_bots_webhooks_and_itself_are_never_turns(discord_channel, fake_discord):
    gid = fake_discord.add_guild()
    cid = fake_discord.channel_of(gid)
    channel, inbox = await discord_channel(group_policy="all")
    me = fake_discord.bot_user
    fake_discord.user_message("beep", author=user(99, "otherbot", bot=True), mentions=(me,))
    fake_discord.user_message("hook", guild_id=gid, channel_id=cid, webhook_id="555")
    fake_discord.user_message("my own words", author=dict(me))
    fake_discord.user_message("my own words", guild_id=gid, channel_id=cid, author=dict(me))
    await _only_sentinel(fake_discord, inbox, channel)


async def test_empty_content_gets_one_notice_per_channel_and_no_turn(
    discord_channel, fake_discord, caplog
):
    gid = fake_discord.add_guild()
    cid = fake_discord.channel_of(gid)
    channel, inbox = await discord_channel(group_policy="all")
    first = fake_discord.user_message("", guild_id=gid, channel_id=cid)
    [notice] = await fake_discord.wait_posts(1, channel_id=cid)
    assert "Message Content" in notice.json["content"]
    assert notice.json["allowed_mentions"]["parse"] == []
    assert int(notice.json["message_reference"]["message_id"]) == int(first["id"])
    fake_discord.user_message("", guild_id=gid, channel_id=cid)
    await _only_sentinel(fake_discord, inbox, channel)
    assert len(fake_discord.posts(channel_id=cid)) == 1
    warnings = [r for r in caplog.records if "MESSAGE CONTENT INTENT" in r.getMessage()]
    assert len(warnings) == 1 and "Developer Portal" in warnings[0].getMessage()


async def test_attachment_without_text_is_a_turn_and_downloadable(discord_channel, fake_discord):
    channel, inbox = await discord_channel()
    url = fake_discord.add_file("cat.png", b"\x89PNG fake")
    attachment = {"id": "77", "filename": "cat.png", "size": 9, "url": url, "proxy_url": url,
                  "content_type": "image/png"}  # fmt: skip
    fake_discord.user_message("", attachments=[attachment])
    [msg] = await inbox.wait(1)
    assert msg.text == "[photo: cat.png]"
    [att] = msg.attachments
    assert (att.kind, att.name, att.mime_type, att.file_id) == (
        "photo",
        "cat.png",
        "image/png",
        url,
    )
    assert await channel.download(att.file_id) == b"\x89PNG fake"


async def test_names_with_backslashes_are_shown_as_written(discord_channel, fake_discord):
    """A display name is text, never a regex replacement: ``\\o/ Sam`` and ``Dr\\dave``
    once raised ``re.error`` and the message was silently lost (mention and quoted reply)."""
    gid = fake_discord.add_guild()
    cid = fake_discord.channel_of(gid)
    _, inbox = await discord_channel()
    sam = dict(user(8, "shrug"), global_name="\\o/ Sam")
    fake_discord.user_message(
        "a note for <@8> and <@!9>?", mentions=(sam, dict(user(9, "x"), global_name="\\1"))
    )
    [msg] = await inbox.wait(1)
    assert msg.text == "a note for @\\o/ Sam and @\\1?"
    quoted = fake_discord.message_payload(
        "ask <@10>",
        channel_id=cid,
        author=sam,
        mentions=(dict(user(10, "d"), global_name="Dr\\dave"),),
    )
    fake_discord.user_message(
        f"<@{fake_discord.bot_id}> what did they mean?",
        guild_id=gid,
        channel_id=cid,
        mentions=(fake_discord.bot_user,),
        referenced_message=quoted,
    )
    msg = (await inbox.wait(2))[1]
    assert msg.text == "> replying to @\\o/ Sam: ask @Dr\\dave\nwhat did they mean?"


def _snapshot(content: str, files: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A ``message_snapshots`` entry as Discord sends it in a forward."""
    return {
        "message": {"type": 0, "content": content, "embeds": [], "attachments": files or [],
                    "timestamp": discord_api.now_iso(), "edited_timestamp": None, "flags": 0,
                    "mentions": [], "mention_roles": []}
    }  # fmt: skip


async def test_a_forwarded_message_is_read_from_its_snapshot(discord_channel, fake_discord):
    """A forward has empty content of its own: it was taken for a missing Message Content
    intent (a false notice, the text lost); its snapshot is what the model reads now."""
    channel, inbox = await discord_channel()
    forward = {"message_reference": {"type": 1, "message_id": "555", "channel_id": "999"},
               "flags": 16384}  # fmt: skip
    snapshot = _snapshot("The meeting moved to 3pm, room 4B")
    fake_discord.user_message("", message_snapshots=[snapshot], **forward)
    [msg] = await inbox.wait(1)
    assert msg.text == "[forwarded message]\nThe meeting moved to 3pm, room 4B"
    assert "reply_to" not in msg.extras  # a forward's source is not a message replied to
    url = fake_discord.add_file("plan.pdf", b"%PDF fake")
    pdf = {"id": "78", "filename": "plan.pdf", "size": 9, "url": url, "proxy_url": url,
           "content_type": "application/pdf"}  # fmt: skip
    fake_discord.user_message("", message_snapshots=[_snapshot("", [pdf])], **forward)
    msg = (await inbox.wait(2))[1]
    assert msg.text == "[forwarded message]\n[document: plan.pdf]"
    [att] = msg.attachments
    assert (att.kind, att.name) == ("document", "plan.pdf")
    assert await channel.download(att.file_id) == b"%PDF fake"
    await until(lambda: channel.handling == 0, 10)
    assert fake_discord.posts() == []  # no "I can't read messages here" notice


async def test_channels_and_custom_emoji_read_as_discord_shows_them(discord_channel, fake_discord):
    """``<#id>`` and ``<:pepe:id>`` reached the model raw; now ``#name`` (the message's
    resolved channels, in a DM the client's cache) and ``:pepe:``."""
    gid = fake_discord.add_guild()
    cid = fake_discord.channel_of(gid)
    other = fake_discord.add_channel(gid, "announcements")
    _, inbox = await discord_channel()
    me = fake_discord.bot_user
    fake_discord.user_message(
        f"<@{fake_discord.bot_id}> summarize <#{other}> please <:pepe:123456789012345678>",
        guild_id=gid,
        channel_id=cid,
        mentions=(me,),
    )
    [msg] = await inbox.wait(1)
    assert msg.text == "summarize #announcements please :pepe:"
    unknown = 123456789012345678
    fake_discord.user_message(f"what's new in <#{other}> and <#{unknown}>? <a:party:98765>")
    msg = (await inbox.wait(2))[1]
    assert msg.text == f"what's new in #announcements and <#{unknown}>? :party:"
