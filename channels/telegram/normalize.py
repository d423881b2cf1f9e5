"""Telegram update -> InboundMessage: the only place that reads an update's JSON.

Pure functions (no I/O), so every odd update shape is unit-testable. Anything the bot
should not answer (edits, service messages, channel posts, also as Telegram copies them
into the channel's discussion group or a member posts as their channel, other bots,
unaddressed group chatter) becomes ``None``; the caller still acknowledges the update.
An anonymous group admin is answered, as the group (``_speaker``).

The update is read as the Bot API's JSON (the dict getUpdates or the webhook gives),
not as PTB objects: ``Update.de_json`` built a whole object tree for each update (about
0.15 ms of CPU for a one-line message, more than the rest of its journey to the bus)
and only a dozen fields are ever read. A field of the wrong shape raises here (KeyError,
TypeError, ...), and the adapter skips that one update as it skipped one PTB refused.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bot.messages import TO_ANY_BOT, WORDLESS, Attachment, ChatKey, InboundMessage, utcnow

log = logging.getLogger(__name__)

CHANNEL = "telegram"
GROUP_TYPES = frozenset({"group", "supergroup"})
QUOTE_MAX = 300
MEDIA_KINDS = ("document", "voice", "audio", "video", "video_note")
# Entities whose text is quoted, an address or a link: an "@name" there mentions no one.
OPAQUE_ENTITIES = frozenset({"code", "pre", "email", "url", "text_link"})

Json = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class BotIdentity:
    """Who "we" are: needed to recognise mentions, replies and commands in groups."""

    id: int
    username: str


def entity_text(text: str, entity: Json) -> str:
    """The part of ``text`` an entity covers: its offset and length count UTF-16 code
    units (an emoji before a mention is two), not Python characters."""
    units = text.encode("utf-16-le")
    start = int(entity["offset"]) * 2
    return units[start : start + int(entity["length"]) * 2].decode("utf-16-le", "replace")


def with_links(text: str, entities: Any) -> str:
    """``text`` with each text link's URL after its words, ``label (url)``: a link behind
    "this article" reached the model as the bare words. Rewritten right to left, so the
    UTF-16 offsets of the links still to go stay true; a label that is its URL stays."""
    links = [e for e in entities or () if e.get("type") == "text_link" and e.get("url")]
    if not links:
        return text
    units = text.encode("utf-16-le")
    for link in sorted(links, key=lambda e: int(e["offset"]), reverse=True):
        end = (int(link["offset"]) + int(link["length"])) * 2
        url = str(link["url"])
        if entity_text(text, link).strip() != url:
            units = units[:end] + f" ({url})".encode("utf-16-le") + units[end:]
    return units.decode("utf-16-le", "replace")


def text_of(m: Json) -> str:
    """A message's text, else its caption, with its text links' URLs (``with_links``).
    Text that is not a string is an update of a shape we cannot read: TypeError."""
    if m.get("text"):
        return with_links(_string(m["text"]), m.get("entities"))
    return with_links(_string(m.get("caption") or ""), m.get("caption_entities"))


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"text of type {type(value).__name__}")
    return value


def full_name(user: Json) -> str:
    first, last = user.get("first_name") or "", user.get("last_name") or ""
    return f"{first} {last}" if last else first


def attachments_of(m: Json) -> tuple[Attachment, ...]:
    """The files a message carries (a photo as its largest size)."""
    found: list[Attachment] = []
    if photo := m.get("photo"):
        big = photo[-1]  # Telegram sends ascending sizes; the last is the original
        found.append(Attachment("photo", big["file_id"], "", "image/jpeg", big.get("file_size")))
    for kind in MEDIA_KINDS:
        media = m.get(kind)
        if media is None:
            continue
        name = media.get("file_name") or ""
        mime = media.get("mime_type") or ""
        found.append(Attachment(kind, media["file_id"], name, mime, media.get("file_size")))
    return tuple(found)


def _track(audio: Json) -> str:
    """An audio file as a player names it, "Queen – Bohemian Rhapsody, 5:54": its
    performer and title (else its file name) and its length."""
    named = " – ".join(str(audio[tag]) for tag in ("performer", "title") if audio.get(tag))
    parts = [named or str(audio.get("file_name") or "")]
    if isinstance(seconds := audio.get("duration"), int) and seconds > 0:
        hours, rest = divmod(seconds, 3600)
        length = f"{rest // 60}:{rest % 60:02d}"
        parts.append(f"{hours}:{length.zfill(5)}" if hours else length)
    return ", ".join(part for part in parts if part)


def _described(m: Json, attachments: tuple[Attachment, ...]) -> str:
    """A short text for messages without one, so the model knows what arrived."""
    if (sticker := m.get("sticker")) is not None:
        return f"[sticker {sticker.get('emoji') or ''}]".replace(" ]", "]")
    if attachments:
        first = attachments[0]
        name = _track(m["audio"]) if first.kind == "audio" else first.name
        return f"[{first.kind}{': ' + name if name else ''}]"
    if (poll := m.get("poll")) is not None:  # a poll or dice had no text: no turn
        options = " / ".join(str(option["text"]) for option in poll["options"])
        return f"[poll: {poll['question']} — {options}]"
    if (dice := m.get("dice")) is not None:
        return f"[dice {dice['emoji']} {dice['value']}]"
    if (venue := m.get("venue")) is not None:  # it comes with its location: said first
        place = venue["location"]
        where = f"{venue['title']}, {venue['address']}"
        return f"[venue {where}: location {place['latitude']}, {place['longitude']}]"
    if (place := m.get("location")) is not None:
        return f"[location {place['latitude']}, {place['longitude']}]"
    if (contact := m.get("contact")) is not None:
        return f"[contact {full_name(contact)} {contact['phone_number']}]"
    return ""


def _from_a_channel(m: Json) -> bool:
    """A channel's post, not a person's turn: copied into the channel's linked discussion
    group (``is_automatic_forward``, sent by the service account 777000 "Telegram", which
    is no bot) or posted in a group as the channel (``sender_chat`` the channel)."""
    if m.get("is_automatic_forward"):
        return True
    return (m.get("sender_chat") or {}).get("type") == "channel"


@dataclass(frozen=True, slots=True)
class Speaker:
    """Who wrote a message: the id access lists and rate limits know them by, the
    @username an allow_from name may match, and the name people see."""

    id: str
    handle: str
    name: str


def _speaker(m: Json) -> Speaker | None:
    """The person who wrote ``m``; None for a bot or a channel's post. An anonymous admin
    writes as the group (``sender_chat`` the group itself, sent by @GroupAnonymousBot):
    the group's id is the speaker's, allowed like a user's, and the admin's signature
    (else the group's title) the name; no @username, since a display name must never
    match an allow_from username."""
    user, chat = m.get("from"), m["chat"]
    sender = m.get("sender_chat") or {}
    if chat["type"] in GROUP_TYPES and sender.get("id") == chat["id"]:
        name = m.get("author_signature") or chat.get("title") or ""
        return Speaker(str(chat["id"]), "", str(name))
    if user is None or user.get("is_bot") or _from_a_channel(m):
        return None
    handle = f"@{user['username']}" if user.get("username") else ""
    return Speaker(str(user["id"]), handle, full_name(user))


def posted_as_channel(update: Json, me: BotIdentity, group_policy: str = "mention") -> str:
    """The channel a group member posted as, when that post addressed the bot ("" for any
    other update): it goes unanswered (a channel is no person to allow, pair or limit),
    and the adapter says so in the log once per group."""
    m = update.get("message") or {}
    sender = m.get("sender_chat") or {}
    if sender.get("type") != "channel" or m.get("is_automatic_forward"):
        return ""
    if m["chat"]["type"] not in GROUP_TYPES:
        return ""
    text = m.get("text") or m.get("caption") or ""
    if group_policy != "all" and not _addressed(m, text, me):
        return ""
    return str(sender.get("title") or sender["id"])


def _replied(m: Json) -> Json | None:
    """The message this one replies to; None for none and for a forum topic's creation
    message, which every message in a topic "replies" to."""
    reply = m.get("reply_to_message")
    if reply is None or reply.get("forum_topic_created") is not None:
        return None
    return reply  # type: ignore[no-any-return]


def _addressed(m: Json, text: str, me: BotIdentity) -> bool:
    """Mentioned (@name or text_mention), replying to us, or a command for us."""
    return _named(m, text, me) or text.startswith("/")


def _named(m: Json, text: str, me: BotIdentity) -> bool:
    """Mentioned (@name or text_mention), replying to us, or a /command@us: meant for this
    bot, not a bare /command, which Telegram delivers to every bot in the group. Telegram
    marks every mention with an entity, so a message with entities is read by them alone:
    "@name" in inline code, a pre block or an e-mail address is no mention (each of those
    was answered, a paid turn). The raw text is searched only when no entity came."""
    body = m.get("text") or m.get("caption") or ""
    entities = m.get("entities") if m.get("text") else m.get("caption_entities")
    if entities:
        named = _named_by_entities(body, entities, me)
        if named is not None:
            return named
    reply = _replied(m)
    if reply is not None and (reply.get("from") or {}).get("id") == me.id:
        return True
    return not entities and _handle_in(text, me)


def _named_by_entities(body: str, entities: Any, me: BotIdentity) -> bool | None:
    """True for a mention of us or a /command@us, False for a leading /command of anyone
    else, None when the entities say neither. A mention inside code, a pre block, an
    address or a link (where Telegram never puts one) does not count."""
    handle = "@" + me.username.lower()
    opaque = [e for e in entities if e.get("type") in OPAQUE_ENTITIES]
    for entity in entities:
        kind = entity.get("type")
        if kind not in {"mention", "text_mention", "bot_command"} or _inside(entity, opaque):
            continue
        if kind == "mention" and entity_text(body, entity).lower() == handle:
            return True
        if kind == "text_mention" and (entity.get("user") or {}).get("id") == me.id:
            return True
        if kind == "bot_command" and entity.get("offset") == 0:
            return entity_text(body, entity).lower().endswith(handle)
    return None


def _inside(entity: Json, spans: list[Json]) -> bool:
    start = int(entity["offset"])
    end = start + int(entity["length"])
    return any(
        int(s["offset"]) <= start and end <= int(s["offset"]) + int(s["length"]) for s in spans
    )


def _handle_in(text: str, me: BotIdentity) -> bool:
    """``@name`` as a word of ``text``, not the domain of an e-mail address
    (``admin@name.org``: a word character, dot, plus or hyphen right before the @, or a
    dot and a word right after the name)."""
    handle = re.escape("@" + me.username)
    return re.search(rf"(?<![\w.+-]){handle}(?!\w|\.\w)", text, re.I) is not None


def _for_other_bot(text: str, me: BotIdentity) -> bool:
    head = text.split(maxsplit=1)[0] if text.startswith("/") else ""
    return "@" in head and head.split("@", 1)[1].lower() != me.username.lower()


def origin_name(origin: Json) -> str:
    """Who a forwarded message (or one replied to in another chat) came from, by its
    ``MessageOrigin``: a user's name and @username, a hidden user's name, a chat's or
    channel's title and @username, and the author's signature when there is one."""
    kind = origin.get("type")
    if kind == "user":
        user = origin.get("sender_user") or {}
        name, handle = full_name(user), user.get("username")
    elif kind == "hidden_user":
        name, handle = origin.get("sender_user_name") or "", None
    else:  # "chat" (sender_chat) or "channel" (chat)
        chat = origin.get("sender_chat") or origin.get("chat") or {}
        name, handle = chat.get("title") or "", chat.get("username")
    name = f"{name} (@{handle})" if handle else name
    if signature := origin.get("author_signature"):
        name = f"{name}, by {signature}"
    return name or "someone"


def _external_context(m: Json) -> dict[str, Any] | None:
    """ "Reply in another chat": the message replied to is elsewhere, so Telegram gives
    its origin and the part quoted instead of the message."""
    external = m.get("external_reply")
    if external is None:
        return None
    quote = m.get("quote") or {}
    quoted = with_links(quote.get("text") or "", quote.get("entities"))
    quoted = quoted or _described(external, attachments_of(external)) or "[message]"
    origin = external.get("origin")
    who = origin_name(origin) if origin else (external.get("chat") or {}).get("title")
    return {
        "message_id": str(external.get("message_id") or ""),
        "author": who or "someone",
        "text": quoted,
    }


def _reply_context(m: Json, me: BotIdentity) -> dict[str, Any] | None:
    reply = _replied(m)
    if reply is None:
        return _external_context(m)
    quote = m.get("quote") or {}
    quoted = with_links(quote.get("text") or "", quote.get("entities")) or text_of(reply)
    quoted = quoted or _described(reply, attachments_of(reply)) or "[message]"
    author = reply.get("from")
    if author is None or reply.get("sender_chat"):  # a channel's post, an anonymous admin
        who = (reply.get("sender_chat") or {}).get("title") or "someone"
    elif author["id"] == me.id:
        who = "you (the bot)"
    else:
        who = f"@{author['username']}" if author.get("username") else full_name(author)
    return {"message_id": str(reply["message_id"]), "author": who or "someone", "text": quoted}


def _sent_at(m: Json) -> datetime:
    date = m.get("date")
    return datetime.fromtimestamp(date, UTC) if isinstance(date, int) else utcnow()


def _words(m: Json, me: BotIdentity, attachments: tuple[Attachment, ...]) -> str:
    """The sender's own words (``text_of``); none for files whose caption only names the
    bot ("@bot" + a photo in a group): that addresses it and says nothing."""
    words = text_of(m)
    if attachments and words.strip().lower() == "@" + me.username.lower():
        return ""
    return words


def _framed(m: Json, text: str, me: BotIdentity, extras: dict[str, Any]) -> str:
    """The text the model reads: a leading mention of the bot cut, a forward's origin
    and the message replied to above it (a command's reply only in ``extras``, so it
    stays parseable): a forwarded "I quit." read as the user's own words. A forward is
    always framed, a command too: only a person's own message runs one, and a
    forwarded '/soul set ...' ran with the forwarder's rights."""
    handle = "@" + me.username
    if text.lower().startswith(handle.lower() + " "):
        text = text[len(handle) :].lstrip()  # "@bot what's up" -> "what's up"
    if (origin := m.get("forward_origin")) is not None:
        extras["forwarded_from"] = origin_name(origin)
        text = f"[forwarded from {extras['forwarded_from']}]\n{text}"
    context = _reply_context(m, me)
    if context is not None:
        extras["reply_to"] = context
        if not text.startswith("/"):  # keep commands parseable
            quoted = " ".join(str(context["text"]).split())
            if len(quoted) > QUOTE_MAX:
                quoted = quoted[:QUOTE_MAX] + "…"
            text = f"> replying to {context['author']}: {quoted}\n{text}"
    return text


def normalize(
    update: Json, me: BotIdentity, group_policy: str = "mention"
) -> InboundMessage | None:
    """The InboundMessage for an update, or None when the bot should stay silent."""
    m = update.get("message")
    if m is None:  # edits, channel posts, callbacks, member updates: not a turn
        return None
    chat = m["chat"]
    speaker = None if chat["type"] == "channel" else _speaker(m)
    if speaker is None:
        return None
    attachments = attachments_of(m)
    text = m.get("text") or m.get("caption") or _described(m, attachments)
    if not text:  # service messages (joins, pins, topic edits, ...)
        return None
    group = chat["type"] in GROUP_TYPES
    if group and _for_other_bot(text, me):
        return None
    if group and group_policy != "all" and not _addressed(m, text, me):
        return None
    extras: dict[str, Any] = {
        "update_id": update["update_id"],
        "chat_type": chat["type"],
        "full_name": speaker.name,
    }
    if chat.get("title"):
        extras["chat_title"] = chat["title"]
    if group and text.startswith("/") and not _named(m, text, me):
        extras[TO_ANY_BOT] = True
    # The links' URLs only now: a URL hidden behind words addresses no bot.
    words = _words(m, me, attachments)
    if attachments and not words:
        extras[WORDLESS] = True  # "[voice]" under a reply's quote is nothing to answer
    text = _framed(m, words or _described(m, attachments), me, extras)
    topic = m.get("message_thread_id") if m.get("is_topic_message") else None
    return InboundMessage(
        key=ChatKey(CHANNEL, str(chat["id"]), str(topic) if topic else None),
        user_id=speaker.id,
        text=text,
        message_id=str(m["message_id"]),
        user_name=speaker.handle,
        attachments=attachments,
        extras=extras,
        received_at=_sent_at(m),
        direct=chat["type"] == "private",
    )
