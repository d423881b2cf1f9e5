"""discord.py Message -> InboundMessage: the only place that reads Discord message objects.

Pure functions (no I/O) over a message the real library parsed. Conversation keys:
a server text channel is ``ChatKey("discord", <channel id>)``; a thread is
``ChatKey("discord", <parent channel id>, <thread id>)``, so conversations in a thread
stay apart from their channel and the answer is posted into the thread (the thread id
is the send target whenever it is set); a DM is ``ChatKey("discord", <DM channel id>)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

import discord

from bot.messages import WORDLESS, Attachment, ChatKey, InboundMessage

CHANNEL = "discord"
QUOTE_MAX = 300
_CHAT_TYPES = frozenset({discord.MessageType.default, discord.MessageType.reply})
ChannelNames = Callable[[int], str | None]  # a channel id -> its name, from a cache


def guild_id(m: discord.Message) -> int | None:
    if m.guild is not None:
        return m.guild.id
    found = getattr(m.channel, "guild_id", None)
    return found if isinstance(found, int) else None


def chat_key(m: discord.Message) -> ChatKey:
    channel = m.channel
    if isinstance(channel, discord.Thread):
        return ChatKey(CHANNEL, str(channel.parent_id), str(channel.id))
    return ChatKey(CHANNEL, str(channel.id))


def target_id(key: ChatKey) -> int:
    """The channel id to post into: the thread when there is one."""
    return int(key.thread_id or key.chat_id)


def ignored(m: discord.Message, me_id: int) -> bool:
    """Never a turn: our own posts, other bots, webhooks, system messages (joins, pins)."""
    return (
        m.author.id == me_id
        or m.author.bot
        or m.webhook_id is not None
        or m.type not in _CHAT_TYPES
    )


def _replied_to(m: discord.Message) -> discord.MessageReference | None:
    """The reference of a reply; a forward's reference (its source) is none."""
    ref = m.reference
    return ref if ref is not None and ref.type == discord.MessageReferenceType.reply else None


def _replies_to_me(m: discord.Message, me_id: int) -> bool:
    ref = _replied_to(m)
    if ref is None:
        return False
    resolved = ref.resolved if ref.resolved is not None else ref.cached_message
    return isinstance(resolved, discord.Message) and resolved.author.id == me_id


def _thread_with_me(m: discord.Message, me_id: int, threads: Collection[int]) -> bool:
    thread = m.channel
    if not isinstance(thread, discord.Thread):
        return False
    return thread.me is not None or thread.owner_id == me_id or thread.id in threads


def addressed(
    m: discord.Message, me_id: int, group_policy: str, threads: Collection[int] = ()
) -> bool:
    """DMs always; in servers a user mention of the bot, a reply to it, or a thread it is
    part of (``group_policy="all"``: everything). @everyone, @here and role mentions are
    not a mention of the bot."""
    if guild_id(m) is None or group_policy == "all":
        return True
    if any(user.id == me_id for user in m.mentions):
        return True
    return _replies_to_me(m, me_id) or _thread_with_me(m, me_id, threads)


def unreadable(m: discord.Message) -> bool:
    """What Discord sends without the Message Content intent: every content field empty
    (a forward's content is in its snapshots)."""
    return not (
        m.content
        or m.attachments
        or m.embeds
        or m.stickers
        or m.poll is not None
        or m.message_snapshots
    )


def _kind(a: discord.Attachment) -> str:
    mime = a.content_type or ""
    if a.is_voice_message():
        return "voice"
    for prefix, kind in (("image/", "photo"), ("audio/", "audio"), ("video/", "video")):
        if mime.startswith(prefix):
            return kind
    return "document"


def attachments(m: discord.Message) -> tuple[Attachment, ...]:
    """``file_id`` is the attachment URL: what ``download`` fetches. A forward's files are
    its snapshots' (the forward itself has none)."""
    found = [*m.attachments, *(a for snap in m.message_snapshots for a in snap.attachments)]
    return tuple(
        Attachment(_kind(a), a.url, a.filename, a.content_type or "", a.size) for a in found
    )


def _no_names(channel_id: int) -> str | None:
    return None


_CHANNEL = re.compile(r"<#(\d+)>")
_EMOJI = re.compile(r"<a?:(\w+):\d+>")


def _markup(text: str, known: Mapping[int, str], channel_name: ChannelNames) -> str:
    """``<#id>`` as ``#name`` (the message's resolved channels, else the client's cache;
    as written when neither knows it) and a custom emoji ``<:name:id>`` as ``:name:``."""

    def channel(found: re.Match[str]) -> str:
        name = known.get(int(found[1])) or channel_name(int(found[1]))
        return found[0] if name is None else "#" + name

    return _EMOJI.sub(lambda found: f":{found[1]}:", _CHANNEL.sub(channel, text))


def _forwarded(m: discord.Message, channel_name: ChannelNames) -> str:
    """What a forward carries: each snapshot's text (else its first file) under a header,
    so the model knows the words are someone else's, passed on."""
    parts = []
    for snap in m.message_snapshots:
        text = _markup(snap.content, {}, channel_name).strip()
        if not text and snap.attachments:
            first = snap.attachments[0]
            text = f"[{_kind(first)}: {first.filename}]"
        parts.append(f"[forwarded message]\n{text}".rstrip())
    return "\n\n".join(parts)


_USER = re.compile(r"<@!?(\d+)>")


def _named(found: re.Match[str], names: dict[int, str]) -> str:
    """``@name`` for a mention Discord resolved, else the mention as written. Replaced by a
    function, so a name is never read as a pattern (``\\o/ Sam`` was a ``re.error``)."""
    name = names.get(int(found[1]))
    return found[0] if name is None else "@" + name


def _cut(m: discord.Message, me_id: int) -> str:
    """The content without a leading mention of the bot. A lone mention stays (a call for
    its attention) unless files, stickers or a poll came with it: then it only addressed
    the bot, and "@Bot" + a picture it cannot see is no question."""
    cut = re.sub(rf"^\s*<@!?{me_id}>[\s,:]*", "", m.content)
    if cut or m.attachments or m.stickers or m.poll is not None:
        return cut
    return m.content


def _wordless(m: discord.Message, me_id: int, files: tuple[Attachment, ...]) -> bool:
    """Files and no words: not the sender's, nor a sticker, a poll or a forward's text."""
    forwarded = any(snap.content.strip() for snap in m.message_snapshots)
    return bool(files) and not (
        _cut(m, me_id).strip() or m.stickers or m.poll is not None or forwarded
    )


def _carried(m: discord.Message) -> list[str]:
    """The stickers and the poll a message carries, which have no content of their own:
    "@Bot lol" + a sticker reached the model as "lol", a poll alone as an empty turn."""
    said = [f"[sticker {sticker.name}]" for sticker in m.stickers]
    if m.poll is not None:
        answers = " / ".join(answer.text for answer in m.poll.answers)
        said.append(f"[poll: {m.poll.question} — {answers}]")
    return said


def readable_text(m: discord.Message, me_id: int, channel_name: ChannelNames = _no_names) -> str:
    """Content with ``<@id>`` mentions as ``@name``, channels as ``#name``, custom emoji as
    ``:name:`` and a leading mention of the bot dropped, then each sticker and the poll."""
    text = _cut(m, me_id)
    names = {user.id: user.display_name for user in m.mentions}
    text = _USER.sub(lambda found: _named(found, names), text)
    for role in m.role_mentions:
        text = text.replace(f"<@&{role.id}>", "@" + role.name)
    text = _markup(text, {c.id: c.name for c in m.channel_mentions}, channel_name)
    text = "\n".join(filter(None, (text.strip(), *_carried(m))))
    if not text and m.attachments:
        first = m.attachments[0]
        text = f"[{_kind(first)}: {first.filename}]"
    forwarded = _forwarded(m, channel_name)
    return f"{text.strip()}\n\n{forwarded}".strip() if forwarded else text.strip()


def _reply_context(
    m: discord.Message, me_id: int, channel_name: ChannelNames
) -> dict[str, Any] | None:
    ref = _replied_to(m)
    resolved = None if ref is None else (ref.resolved or ref.cached_message)
    if not isinstance(resolved, discord.Message):
        return None
    who = "you (the bot)" if resolved.author.id == me_id else "@" + resolved.author.display_name
    quoted = " ".join(readable_text(resolved, me_id, channel_name).split()) or "[message]"
    if len(quoted) > QUOTE_MAX:
        quoted = quoted[:QUOTE_MAX] + "…"
    return {"message_id": str(resolved.id), "author": who, "text": quoted}


def to_inbound(
    m: discord.Message, me_id: int, channel_name: ChannelNames = _no_names
) -> InboundMessage:
    """The turn for an addressed, readable message; ``message_id`` is Discord's own id, so
    a redelivered event (a resumed gateway replays) is dropped by the daemon's inbox."""
    key = chat_key(m)
    gid = guild_id(m)
    text = readable_text(m, me_id, channel_name)
    extras: dict[str, Any] = {
        "workspace_key": f"{CHANNEL}:{gid}" if gid is not None else f"{CHANNEL}:dm",
        "chat_type": "dm" if gid is None else ("thread" if key.thread_id else "guild"),
        "full_name": m.author.display_name,
    }
    if gid is not None:
        extras["guild_id"] = str(gid)
    name = getattr(m.channel, "name", None)
    if isinstance(name, str) and name:
        extras["chat_title"] = name
    files = attachments(m)
    if _wordless(m, me_id, files):
        extras[WORDLESS] = True  # "[voice: ...]" under a reply's quote is nothing to answer
    context = _reply_context(m, me_id, channel_name)
    if context is not None:
        extras["reply_to"] = context
        if not text.startswith("/"):  # a command sent as a reply stays the command
            text = f"> replying to {context['author']}: {context['text']}\n{text}"
    return InboundMessage(
        key=key,
        user_id=str(m.author.id),
        text=text,
        message_id=str(m.id),
        user_name="@" + m.author.name,
        attachments=files,
        extras=extras,
        received_at=m.created_at,
        direct=gid is None,
    )
