"""Telegram update -> InboundMessage: the only place that reads PTB message objects.

Pure functions (no I/O), so every odd update shape is unit-testable. Anything the bot
should not answer (edits, service messages, channel posts, other bots, unaddressed
group chatter) becomes ``None``; the caller still acknowledges the update.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from telegram import Message, MessageEntity, Update

from bot.messages import Attachment, ChatKey, InboundMessage

log = logging.getLogger(__name__)

CHANNEL = "telegram"
GROUP_TYPES = frozenset({"group", "supergroup"})
QUOTE_MAX = 300


@dataclass(frozen=True, slots=True)
class BotIdentity:
    """Who "we" are: needed to recognise mentions, replies and commands in groups."""

    id: int
    username: str


def _attachments(m: Message) -> tuple[Attachment, ...]:
    found: list[Attachment] = []
    if m.photo:
        big = m.photo[-1]  # Telegram sends ascending sizes; the last is the original
        found.append(Attachment("photo", big.file_id, "", "image/jpeg", big.file_size))
    for kind, media in (
        ("document", m.document),
        ("voice", m.voice),
        ("audio", m.audio),
        ("video", m.video),
        ("video_note", m.video_note),
    ):
        if media is None:
            continue
        name = getattr(media, "file_name", None) or ""
        mime = getattr(media, "mime_type", None) or ""
        found.append(Attachment(kind, media.file_id, name, mime, media.file_size))
    return tuple(found)


def _described(m: Message, attachments: tuple[Attachment, ...]) -> str:
    """A short text for messages without one, so the model knows what arrived."""
    if m.sticker is not None:
        return f"[sticker {m.sticker.emoji or ''}]".replace(" ]", "]")
    if attachments:
        first = attachments[0]
        return f"[{first.kind}{': ' + first.name if first.name else ''}]"
    if m.location is not None:
        return f"[location {m.location.latitude}, {m.location.longitude}]"
    if m.contact is not None:
        return f"[contact {m.contact.first_name} {m.contact.phone_number}]"
    return ""


def _is_topic_root(reply: Message) -> bool:
    # In forum topics every message "replies" to the topic's creation service message.
    return reply.forum_topic_created is not None


def _addressed(m: Message, text: str, me: BotIdentity) -> bool:
    """Mentioned (@name or text_mention), replying to us, or a command for us."""
    handle = "@" + me.username.lower()
    entities = m.parse_entities() if m.text else m.parse_caption_entities()
    for entity, value in entities.items():
        if entity.type == MessageEntity.MENTION and value.lower() == handle:
            return True
        if entity.type == MessageEntity.TEXT_MENTION and entity.user and entity.user.id == me.id:
            return True
        if entity.type == MessageEntity.BOT_COMMAND and entity.offset == 0:
            return "@" not in value or value.lower().endswith(handle)
    reply = m.reply_to_message
    if reply is not None and not _is_topic_root(reply):
        author = reply.from_user
        if author is not None and author.id == me.id:
            return True
    return text.startswith("/") or re.search(rf"{re.escape(handle)}\b", text, re.I) is not None


def _for_other_bot(text: str, me: BotIdentity) -> bool:
    head = text.split(maxsplit=1)[0] if text.startswith("/") else ""
    return "@" in head and head.split("@", 1)[1].lower() != me.username.lower()


def _reply_context(m: Message, me: BotIdentity) -> dict[str, Any] | None:
    reply = m.reply_to_message
    if reply is None or _is_topic_root(reply):
        return None
    quoted = (m.quote.text if m.quote else None) or reply.text or reply.caption
    quoted = quoted or _described(reply, _attachments(reply)) or "[message]"
    author = reply.from_user
    if author is None:
        who = reply.sender_chat.title if reply.sender_chat else "someone"
    elif author.id == me.id:
        who = "you (the bot)"
    else:
        who = f"@{author.username}" if author.username else author.full_name
    return {"message_id": str(reply.message_id), "author": who or "someone", "text": quoted}


def normalize(
    update: Update, me: BotIdentity, group_policy: str = "mention"
) -> InboundMessage | None:
    """The InboundMessage for an update, or None when the bot should stay silent."""
    m = update.message
    if m is None:  # edits, channel posts, callbacks, member updates: not a turn
        return None
    user = m.from_user
    if user is None or user.is_bot or m.chat.type == "channel":
        return None
    attachments = _attachments(m)
    text = m.text or m.caption or _described(m, attachments)
    if not text:  # service messages (joins, pins, topic edits, ...)
        return None
    group = m.chat.type in GROUP_TYPES
    if group and _for_other_bot(text, me):
        return None
    if group and group_policy != "all" and not _addressed(m, text, me):
        return None
    handle = "@" + me.username
    if text.lower().startswith(handle.lower() + " "):
        text = text[len(handle) :].lstrip()  # "@bot what's up" -> "what's up"
    extras: dict[str, Any] = {
        "update_id": update.update_id,
        "chat_type": m.chat.type,
        "full_name": user.full_name,
    }
    if m.chat.title:
        extras["chat_title"] = m.chat.title
    context = _reply_context(m, me)
    if context is not None:
        extras["reply_to"] = context
        if not text.startswith("/"):  # keep commands parseable
            quoted = " ".join(str(context["text"]).split())
            if len(quoted) > QUOTE_MAX:
                quoted = quoted[:QUOTE_MAX] + "…"
            text = f"> replying to {context['author']}: {quoted}\n{text}"
    thread = str(m.message_thread_id) if m.is_topic_message and m.message_thread_id else None
    return InboundMessage(
        key=ChatKey(CHANNEL, str(m.chat.id), thread),
        user_id=str(user.id),
        text=text,
        message_id=str(m.message_id),
        user_name=f"@{user.username}" if user.username else "",
        attachments=attachments,
        extras=extras,
        received_at=m.date,
        direct=m.chat.type == "private",
    )
