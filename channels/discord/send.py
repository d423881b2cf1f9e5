"""OutboundMessage -> Discord posts: 2,000-character chunks, replies, no pings, errors sorted.

The model's Markdown goes as written but for its tables (markdown.py: Discord shows no
table, so each becomes an aligned code block).

Everything goes through ``PartialMessageable`` (a channel known only by id), so an
answer needs no channel cache: after a restart the bot can still answer a DM or a
thread it has not seen since. Rate limits are discord.py's: it waits out a 429 that
says ``retry_after`` (up to the client's ``max_ratelimit_timeout``) and retries.
Errors are sorted for Delivery: a refusal for good (no access, unknown channel, a
400) raises DeliveryRejected (ChatGone for Missing Access and Unknown Channel: the
channel, or the thread posted into, refuses the bot for good and its repeats end),
anything else (5xx, network, long rate limit) ChannelError, which the outbox retries.

Each part of an answer carries a nonce made from its delivery key, and discord.py sends
it with ``enforce_nonce``: Discord then creates no second message for the same nonce
within a few minutes and returns the first. A post whose answer was lost is re-sent and
lands once. A delivery a dead process was posting (its sent mark never written) is
named by delivery after the restart (:meth:`DiscordSender.in_doubt`), which may be long
after that window: each of its parts is first looked for in the channel's recent
history (lookup.py) and posted only when it is not there.

An answer that was streamed (``OutboundMessage.preview_id``) is edited into its
preview (an edit repeated after a crash changes nothing); its later parts follow as
new messages with their nonces. A preview that can no longer be edited (deleted,
Unknown Message, or too old: error 30046) is deleted and the answer posted whole.
The previews themselves go over preview.py, which never waits out a rate limit.
"""

from __future__ import annotations

import hashlib
import io
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, TypeVar

import aiohttp
import discord

from bot.errors import ChannelError, ChatGone, DeliveryRejected, PreviewGone
from bot.messages import ChatKey, OutboundMessage
from channels.base import Sent, StateStore
from channels.discord.client import NO_PINGS
from channels.discord.lookup import Doubts, LostParts
from channels.discord.markdown import for_discord
from channels.discord.normalize import target_id
from channels.discord.preview import TOO_OLD_TO_EDIT, UNKNOWN_MESSAGE, PreviewRest
from channels.format import PartsProgress, split_message
from channels.shown import ShownPreviews

log = logging.getLogger(__name__)

MAX_CHARS = 2000  # Discord's limit per message content
MAX_UPLOAD_BYTES = 10_000_000  # a file in any chat without a server boost (more with one)
MISSING_ACCESS = 50001  # 403: the bot cannot see the channel (removed, no access)
UNKNOWN_CHANNEL = 10003  # 404: the channel or thread was deleted
T = TypeVar("T")


async def call(request: Callable[[], Awaitable[T]]) -> T:
    """One REST call with discord.py's errors mapped onto the daemon's."""
    try:
        return await request()
    except (discord.Forbidden, discord.NotFound) as exc:
        if exc.code in (MISSING_ACCESS, UNKNOWN_CHANNEL):
            raise ChatGone(f"Discord refused: HTTP {exc.status} {exc.text}") from exc
        raise DeliveryRejected(f"Discord refused: HTTP {exc.status} {exc.text}") from exc
    except discord.RateLimited as exc:
        raise ChannelError(f"Discord rate limit: retry in {exc.retry_after:g} s") from exc
    except discord.HTTPException as exc:
        if 400 <= exc.status < 500 and exc.status != 429:
            raise DeliveryRejected(f"Discord refused: HTTP {exc.status} {exc.text}") from exc
        raise ChannelError(f"Discord API error: HTTP {exc.status} {exc.text}") from exc
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        raise ChannelError(f"Discord unreachable: {exc!r}") from exc


def nonce(part_key: str) -> str:
    """The nonce of one part of a delivery: Discord takes at most 25 characters."""
    return hashlib.sha256(part_key.encode("utf-8")).hexdigest()[:25]


def reference(reply_to: str | None, channel_id: int) -> discord.MessageReference | None:
    """A reply to ``reply_to`` when it is a Discord id; still posted if that message is gone."""
    if not reply_to or not reply_to.isdigit():
        return None
    return discord.MessageReference(
        message_id=int(reply_to), channel_id=channel_id, fail_if_not_exists=False
    )


class DiscordSender:
    def __init__(
        self,
        client: discord.Client,
        state: StateStore | None = None,
        token: str = "",
        doubts: Doubts | None = None,
        *,
        link_previews: bool = False,
    ) -> None:
        self._client = client
        self._parts = PartsProgress(state=state, prefix="discord")
        self._suppress = not link_previews  # embeds (the channel's link_previews key)
        self.previews = PreviewRest(token, client.http.user_agent, link_previews=link_previews)
        self._shown = ShownPreviews()
        self._doubts = doubts or Doubts()

    async def in_doubt(self, msg: OutboundMessage, since: datetime) -> None:
        """A dead run was posting ``msg`` (queued at ``since``): its next send looks each
        part up in the history before posting it."""
        self._doubts.add(msg.delivery_key, since)

    def _channel(self, key: ChatKey) -> discord.PartialMessageable:
        if self._client.user is None:
            raise ChannelError("discord is not logged in yet")
        return self._client.get_partial_messageable(target_id(key))

    async def send(self, msg: OutboundMessage) -> Sent:
        chunks = split_message(for_discord(msg.text), MAX_CHARS)
        if not chunks:
            log.info("empty reply to %s not sent", msg.key)
            if msg.preview_id:
                await self._drop_preview(msg.key, msg.preview_id)
            return Sent()
        channel = self._channel(msg.key)
        ref = reference(msg.reply_to, channel.id)
        preview = msg.preview_id
        lost = self._lost_parts(channel, msg.delivery_key)

        def post_part(i: int) -> Awaitable[str]:
            once = nonce(f"{msg.delivery_key}#{i}")
            if i == 0 and preview:  # an edit: repeating it changes nothing
                return self._replace(channel, preview, chunks[0], ref, once)
            part_ref = ref if i == 0 else None
            return self._post_once(channel, i, chunks[i], part_ref, once=once, lost=lost)

        try:
            sent = await self._parts.post(msg.delivery_key, len(chunks), post_part)
        except ChatGone as exc:
            _scope(msg.key, exc)
            raise
        self._doubts.settle(msg.delivery_key)
        return sent

    def _lost_parts(self, channel: discord.PartialMessageable, key: str) -> LostParts | None:
        if self._doubts.since(key) is None or self._client.user is None:
            return None
        return LostParts(channel, self._client.user.id, self._doubts, key)

    async def _post_once(
        self,
        channel: discord.PartialMessageable,
        index: int,
        text: str,
        ref: discord.MessageReference | None,
        *,
        once: str,
        lost: LostParts | None,
    ) -> str:
        """Part ``index``: the message a dead run already made for it, else a new post."""
        if lost is not None:
            found = await lost.find(index, text, ref.message_id if ref is not None else None)
            if found is not None:
                return found
        return await self._post(channel, text, ref, once)

    async def _replace(
        self,
        channel: discord.PartialMessageable,
        preview: str,
        text: str,
        ref: discord.MessageReference | None,
        once: str,
    ) -> str:
        """The answer's first part edited into its preview (unless it reads so already);
        posted as new if it is gone."""
        where = ChatKey("discord", str(channel.id))
        if self._shown.already(where, preview, text):
            return preview
        partial = channel.get_partial_message(int(preview))
        try:
            await call(lambda: _edit_or_gone(partial, text))
        except PreviewGone as exc:
            log.info("discord preview %s cannot be edited (%s); posting the answer", preview, exc)
            await self._drop_preview(where, preview)
            return await self._post(channel, text, ref, once)
        return preview

    async def _drop_preview(self, key: ChatKey, message_id: str) -> None:
        try:
            await self.delete_preview(key, message_id)
        except ChannelError as exc:  # best effort: the answer goes out regardless
            log.warning("discord: could not delete the preview %s: %s", message_id, exc)

    # -- previews: never wait (see preview.py) -------------------------------------------
    async def post_preview(self, key: ChatKey, text: str, reply_to: str | None) -> str:
        channel_id = target_id(key)
        ref = reference(reply_to, channel_id)
        cut = text[:MAX_CHARS] or "…"
        message_id = await self.previews.post(channel_id, cut, dict(ref.to_dict()) if ref else None)
        self._shown.showing(ChatKey("discord", str(channel_id)), message_id, cut)
        return message_id

    async def edit_preview(self, key: ChatKey, message_id: str, text: str) -> None:
        cut, where = text[:MAX_CHARS] or "…", ChatKey("discord", str(target_id(key)))
        self._shown.forget(where, message_id)  # unknown until the platform says it took it
        await self.previews.edit(target_id(key), message_id, cut)
        self._shown.showing(where, message_id, cut)

    async def delete_preview(self, key: ChatKey, message_id: str) -> None:
        await self.previews.delete(target_id(key), message_id)

    async def _post(
        self,
        channel: discord.PartialMessageable,
        text: str,
        ref: discord.MessageReference | None,
        once: str | None = None,
    ) -> str:
        extra: dict[str, Any] = {"nonce": once} if once is not None else {}
        if ref is not None:
            extra["reference"] = ref
        sent = await call(
            lambda: channel.send(
                content=text, allowed_mentions=NO_PINGS, suppress_embeds=self._suppress, **extra
            )
        )
        return str(sent.id)

    async def notice(self, key: ChatKey, text: str, reply_to: str | None = None) -> str:
        """One short message outside any turn (e.g. "I cannot read messages here")."""
        channel = self._channel(key)
        return await self._post(channel, text, reference(reply_to, channel.id))

    async def typing(self, key: ChatKey) -> None:
        channel = self._channel(key)

        async def show() -> None:
            await channel.typing()  # one POST /typing (lasts ~10 s or until we post)

        await call(show)

    async def edit(self, key: ChatKey, message_id: str, text: str) -> None:
        chunks = split_message(text, MAX_CHARS) or ["…"]
        if len(chunks) > 1:
            log.info("edit of %s in %s cut to its first 2,000 characters", message_id, key)
        partial = self._channel(key).get_partial_message(int(message_id))
        await call(lambda: partial.edit(content=chunks[0], allowed_mentions=NO_PINGS))

    async def react(self, key: ChatKey, message_id: str, emoji: str) -> None:
        partial = self._channel(key).get_partial_message(int(message_id))
        await call(lambda: partial.add_reaction(emoji))

    async def unreact(self, key: ChatKey, message_id: str, emoji: str) -> None:
        partial = self._channel(key).get_partial_message(int(message_id))
        me = self._client.user
        assert me is not None  # _channel checked it
        await call(lambda: partial.remove_reaction(emoji, me))

    async def upload(self, key: ChatKey, name: str, data: bytes, caption: str = "") -> Sent:
        channel = self._channel(key)
        file = discord.File(io.BytesIO(data), filename=name)
        content = split_message(caption, MAX_CHARS)[:1]
        try:
            sent = await call(
                lambda: channel.send(
                    content=content[0] if content else None,
                    file=file,
                    allowed_mentions=NO_PINGS,
                    suppress_embeds=self._suppress,
                )
            )
        except ChatGone as exc:
            _scope(key, exc)
            raise
        return Sent((str(sent.id),))

    async def download(self, url: str) -> bytes:
        if self._client.user is None:
            raise ChannelError("discord is not logged in yet")
        return await call(lambda: self._client.http.get_from_cdn(url))


def _scope(key: ChatKey, exc: ChatGone) -> None:
    """Posted into a thread, only the thread is gone (its channel may still take the bot)."""
    exc.thread_only = bool(key.thread_id)


async def _edit_or_gone(partial: discord.PartialMessage, text: str) -> None:
    try:
        await partial.edit(content=text, allowed_mentions=NO_PINGS)
    except discord.HTTPException as exc:
        if exc.status == 404 or exc.code in (UNKNOWN_MESSAGE, TOO_OLD_TO_EDIT):
            raise PreviewGone(f"HTTP {exc.status} {exc.text}") from exc
        raise
