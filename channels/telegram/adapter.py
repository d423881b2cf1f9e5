"""The Telegram channel: long polling (default) or a webhook, through python-telegram-bot.

Own polling loop instead of PTB's Updater, because the offset must be committed only
after ``put_inbound`` returned (the update is journaled in the inbox): a crash before
the commit re-fetches the update and the inbox drops the duplicate, so nothing is lost
and nothing is answered twice. The offset lives in the key-value store under the bot's
id, so a new token starts clean. This module only normalizes and sends; no agent logic.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from telegram import WebhookInfo
from telegram.error import InvalidToken, RetryAfter, TelegramError

from bot.errors import ChannelError
from bot.lru import LRU
from bot.messages import ChatKey, InboundMessage, OutboundMessage
from channels.base import ChannelHealth, ChatMovedHook, PutInbound, Route, Sent, StateStore
from channels.health import LinkHealth
from channels.telegram.albums import Albums, HeldAlbums, Unit
from channels.telegram.normalize import CHANNEL, BotIdentity, normalize, posted_as_channel
from channels.telegram.preview import TelegramPreviews, is_draft
from channels.telegram.rawbot import RawBot
from channels.telegram.send import (
    MAX_CHARS,
    MAX_UPLOAD_BYTES,
    TelegramSender,
    redact,
    retry_after_s,
)
from channels.telegram.settings import TelegramSettings
from channels.telegram.transport import AiohttpRequest
from channels.telegram.webhook import TelegramWebhook

log = logging.getLogger(__name__)

ALLOWED_UPDATES = ["message", "edited_message"]
READ_TIMEOUT_S = 10.0  # on top of the long-poll timeout
POLL_FAILURES_DEGRADE = 3  # failed polls in a row before /healthz reports the channel
WEBHOOK_CHECK_S = 60.0  # between getWebhookInfo checks in webhook mode
TOLD_KEPT = 1_000  # groups whose posts as a channel were logged as unanswered
ALBUM_POLL_S = 0.25  # between polls while an album is held (others' messages wait this)


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential, capped: 1, 2, 4, ... seconds up to ``cap`` between failed polls."""

    base: float = 1.0
    cap: float = 60.0

    def delay(self, failures: int) -> float:
        return min(self.cap, self.base * 2.0 ** max(0, failures - 1))


def file_base_url(base_url: str) -> str:
    """``https://api.telegram.org/bot`` -> ``https://api.telegram.org/file/bot``."""
    head, sep, tail = base_url.rpartition("/bot")
    return f"{head}/file/bot{tail}" if sep else base_url.rstrip("/") + "/file/bot"


class TelegramChannel:
    name = CHANNEL
    trusted = False

    def __init__(
        self,
        settings: TelegramSettings,
        *,
        state: StateStore | None = None,
        poll_timeout: int = 30,
        backoff: Backoff = Backoff(),
        standby: bool = False,
        webhook_check_s: float = WEBHOOK_CHECK_S,
    ) -> None:
        self.settings = settings
        # Among replicas: poll only while this replica holds the poller's lease.
        self._standby = standby
        self.state = state  # where the polling offset survives restarts
        self._poll_timeout = poll_timeout
        self._backoff = backoff
        self._webhook_check_s = webhook_check_s
        self.link = self._link(settings.mode == "webhook")
        self.bot = RawBot(
            settings.token.get_secret_value(),
            base_url=settings.base_url,
            base_file_url=file_base_url(settings.base_url),
            # One connection per reply in flight: at 16, half the replies of a burst of
            # 50 chats waited for a free one (each real sendMessage is a round trip of
            # 0.1 s or more to Telegram, so the pool capped replies per second).
            request=AiohttpRequest(connection_pool_size=64, read_timeout=20.0),
            get_updates_request=AiohttpRequest(read_timeout=READ_TIMEOUT_S),
            link_previews=settings.link_previews,
        )
        self.previews = TelegramPreviews(self.bot, drafts=settings.telegram_drafts)
        self.sender = TelegramSender(self.bot, state=state, shown=self.previews.shown)
        self.me: BotIdentity | None = None
        self._put_inbound: PutInbound | None = None
        self._chat_moved: ChatMovedHook | None = None
        self._offset: int | None = None
        self.albums = Albums()
        self._ahead: set[int] = set()  # journaled, past the offset (behind a held album)
        self._hold_s = 0.0  # an album is held: poll again after this, not at once
        self._task: asyncio.Task[None] | None = None
        self._worked = 0.0  # when a webhook delivery last worked (epoch seconds)
        secret = settings.webhook_secret.get_secret_value()
        path = urlsplit(settings.webhook_url).path or "/"
        self.webhook = TelegramWebhook(path, secret, self._put)
        self.held_albums = HeldAlbums(self._read, self._journal)
        self._told_as_channel: LRU[Any, bool] = LRU(TOLD_KEPT)

    def _link(self, webhook: bool) -> LinkHealth:
        """Polling: every getUpdates answers within its long-poll timeout, so a success
        older than three of them is news too. Webhook: a delivery or a getWebhookInfo
        check that finds no delivery error since the last one that worked."""
        if webhook:
            return LinkHealth(CHANNEL, "webhook delivery", degrade_after=2)
        stale = 3 * (self._poll_timeout + READ_TIMEOUT_S)
        return LinkHealth(CHANNEL, "polling", degrade_after=POLL_FAILURES_DEGRADE,
                          stale_after_s=stale)  # fmt: skip

    @property
    def connected(self) -> bool:
        """Started, and its last polls (or webhook checks) worked (see :meth:`health`)."""
        return self.health().ok

    def health(self) -> ChannelHealth:
        """A standby replica (another polls) is healthy once identified."""
        if self._standby:
            return ChannelHealth(self.me is not None, "not connected")
        link = self.link.report()
        if not link.ok:
            return link
        polling = self._task is not None and not self._task.done()
        running = self.webhook.accepting or polling
        return link if self.me is not None and running else ChannelHealth(False, "not connected")

    @property
    def receive_lease(self) -> str | None:
        """Long polling is one poller per token (a second gets 409); webhooks reach any."""
        return "telegram:poll" if self.settings.mode == "polling" else None

    async def receive(self, on: bool) -> None:
        """Start polling from the offset the last poller committed, or stop."""
        if self.settings.mode != "polling":
            return
        self._standby = not on
        if on and self._task is None:
            if self.me is not None and self.state is not None:
                saved = await self.state.get(self.offset_key)
                self._offset = int(saved) if saved else None
            self._task = asyncio.create_task(self._poll_loop(), name="telegram-poll")
        elif not on and self._task is not None:
            task, self._task = self._task, None
            task.cancel()
            await asyncio.wait([task])  # a cancellation of the caller still ends it

    def routes(self) -> list[Route]:
        """Webhook mode: the webhook path on the daemon's shared web app."""
        if self.settings.mode != "webhook":
            return []
        return [Route("POST", self.webhook.path, self.webhook.handle)]

    @property
    def offset_key(self) -> str:
        assert self.me is not None
        return f"telegram:{self.me.id}:offset"

    async def start(self, put_inbound: PutInbound) -> None:
        self._put_inbound = put_inbound
        webhook = self.settings.mode == "webhook"
        secret = self.settings.webhook_secret.get_secret_value()
        if webhook and not (self.settings.webhook_url and secret):
            raise ChannelError("telegram webhook mode needs webhook_url and webhook_secret")
        try:
            await self._identify()
        except InvalidToken as exc:  # PTB's message quotes the token itself
            refused = redact(exc.message, self.bot.token)
            raise ChannelError(f"telegram token refused: {refused}") from exc
        except TelegramError as exc:
            if webhook:
                raise ChannelError(f"telegram unreachable: {redact(exc, self.bot.token)}") from exc
            error = redact(exc, self.bot.token)
            log.warning("telegram unreachable at start (%s); retrying in the background", error)
        if webhook:
            await self._start_webhook(secret)
            self._task = asyncio.create_task(self._watch_webhook(), name="telegram-webhook")
        elif not self._standby:
            self._task = asyncio.create_task(self._poll_loop(), name="telegram-poll")

    async def _start_webhook(self, secret: str) -> None:
        self.webhook.accepting = True
        try:
            await self.sender.call(
                lambda: self.bot.set_webhook(
                    self.settings.webhook_url, secret_token=secret, allowed_updates=ALLOWED_UPDATES
                )
            )
        except (TelegramError, ChannelError) as exc:
            self.webhook.accepting = False
            error = redact(exc, self.bot.token)
            raise ChannelError(f"telegram webhook could not be set up: {error}") from exc

    async def _identify(self) -> None:
        await self.bot.initialize()  # getMe
        self.me = BotIdentity(self.bot.id, self.bot.username)
        if self.state is not None:
            saved = await self.state.get(self.offset_key)
            self._offset = int(saved) if saved else None
        log.info("telegram: connected as @%s (id %d)", self.me.username, self.me.id)

    async def _poll_loop(self) -> None:
        cleared = False
        while True:
            try:
                if self.me is None:
                    await self._identify()
                if not cleared:
                    await self.bot.delete_webhook()  # polling and a webhook exclude each other
                    cleared = True
                await self._accept(await self._fetch())
                self.link.succeeded()
                if self._hold_s:  # the held album's updates would come back at once
                    await asyncio.sleep(min(self._hold_s, ALBUM_POLL_S))
            except asyncio.CancelledError:
                raise
            except RetryAfter as exc:
                wait = retry_after_s(exc)
                log.warning("telegram flood control on getUpdates: waiting %.1f s", wait)
                await asyncio.sleep(wait)
            except Exception as exc:  # network, 5xx, conflict, store: back off and retry
                level = logging.ERROR if isinstance(exc, InvalidToken) else logging.WARNING
                # Logged once per streak (LinkHealth), not once per failed poll.
                self.link.failed(_why(exc, self.bot.token), level)
                delay = self._backoff.delay(self.link.failures)
                log.debug("telegram polling: retry in %.1f s", delay)
                await asyncio.sleep(delay)

    async def _watch_webhook(self) -> None:
        """Webhook mode: Telegram says in getWebhookInfo whether its deliveries to us fail
        (our address unreachable, a 5xx) or the webhook was replaced; a quiet chat alone
        proves nothing either way."""
        started = time.time()
        while True:
            await asyncio.sleep(self._webhook_check_s)
            try:
                info = await self.bot.get_webhook_info()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                level = logging.ERROR if isinstance(exc, InvalidToken) else logging.WARNING
                self.link.failed(f"getWebhookInfo: {_why(exc, self.bot.token)}", level)
                continue
            problem = webhook_problem(info, self.settings.webhook_url, max(started, self._worked))
            if problem:
                self.link.failed(problem)
            else:
                self.link.succeeded()

    def on_chat_moved(self, moved: ChatMovedHook) -> None:
        self._chat_moved = moved

    async def _migrations(self, updates: Sequence[dict[str, Any]]) -> None:
        """A group upgraded to a supergroup says so in two service messages (the old
        chat's ``migrate_to_chat_id``, the new one's ``migrate_from_chat_id``): what is
        kept for the chat moves to the new id before the offset passes them. Either is
        enough; the second moves nothing more."""
        for data in updates:
            message = data.get("message")
            if self._chat_moved is None or not isinstance(message, dict):
                continue
            chat = message.get("chat")
            here = chat.get("id") if isinstance(chat, dict) else None
            to, since = message.get("migrate_to_chat_id"), message.get("migrate_from_chat_id")
            old, new = (here, to) if isinstance(to, int) else (since, here)
            if not isinstance(old, int) or not isinstance(new, int):
                continue
            try:
                await self._chat_moved(ChatKey(CHANNEL, str(old)), str(new))
            except Exception:  # a refused send to the old id moves them again
                log.exception("telegram chat %s moved to %s: not followed", old, new)

    async def _fetch(self) -> list[dict[str, Any]]:
        """Raw getUpdates: read one by one, so one update we cannot read blocks nothing."""
        params: dict[str, Any] = {"timeout": self._poll_timeout, "allowed_updates": ALLOWED_UPDATES}
        if self._offset is not None:
            params["offset"] = self._offset
        result = await self.bot.raw_updates(params, READ_TIMEOUT_S + self._poll_timeout)
        return [u for u in result if isinstance(u, dict) and isinstance(u.get("update_id"), int)]

    async def _accept(self, updates: Sequence[dict[str, Any]]) -> None:
        """Journal a batch's messages, then commit the offset past what was journaled.

        Each chat's messages go in order, one after another; the chats of a batch go at
        once, so their journal writes share a commit (a batch of 50 chats cost 50
        fsyncs one after another, and the poll loop waited on them while replies
        queued). The offset stops at the first update not journaled: it and the ones
        after it are fetched again; those journaled already (behind an album held in
        another chat) are skipped, and the inbox drops any other repeat. An album still
        held stops its chat there (``albums.py``).
        """
        await self._migrations(updates)
        units = self.albums.units(updates, self._read, time.monotonic())
        chats: dict[ChatKey, list[Unit]] = {}
        for unit in units:
            if unit.msg is not None and not self._ahead.issuperset(unit.update_ids):
                chats.setdefault(unit.msg.key, []).append(unit)
        journaled = set(self._ahead)  # the update ids whose messages are on the bus
        results = await asyncio.gather(
            *(self._put_in_order(chat, journaled) for chat in chats.values()),
            return_exceptions=True,
        )
        start = self._offset
        waiting = [u for u in units if u.msg is not None or u.held_for]
        pending = {i for u in waiting for i in u.update_ids} - journaled
        for data in updates:
            if int(data["update_id"]) in pending:
                break
            self._offset = int(data["update_id"]) + 1
        self._ahead = {i for i in journaled if self._offset is None or i >= self._offset}
        if self._offset != start and self.state is not None and self.me is not None:
            await self.state.set(self.offset_key, str(self._offset))
        self._hold_s = min((u.held_for for u in units if u.held_for), default=0.0)
        if failed := next((r for r in results if isinstance(r, BaseException)), None):
            raise failed

    async def _put_in_order(self, chat: list[Unit], journaled: set[int]) -> None:
        """One chat's messages of a batch, in order; the first failure, or an album
        still held, stops the rest."""
        assert self._put_inbound is not None
        for unit in chat:
            if unit.held_for or unit.msg is None:
                return
            await self._put_inbound(unit.msg)
            journaled.update(unit.update_ids)

    def _read(self, data: dict[str, Any]) -> InboundMessage | None:
        """The update's message, or None when there is nothing to answer."""
        assert self.me is not None
        try:
            msg = normalize(data, self.me, self.settings.group_policy)
            if msg is None:
                self._unanswered(data)
        except Exception:  # one unreadable update must not block the ones behind it
            log.exception("telegram update %s could not be read; skipped", data.get("update_id"))
            return None
        return msg

    def _unanswered(self, data: dict[str, Any]) -> None:
        """Logged: at DEBUG, any update that needs no answer; at INFO, once per group, a
        member who addressed the bot posting as their channel, who gets no answer."""
        assert self.me is not None
        as_channel = posted_as_channel(data, self.me, self.settings.group_policy)
        group = data["message"]["chat"]["id"] if as_channel else None
        if group is None or group in self._told_as_channel:
            log.debug("telegram update %s needs no answer", data.get("update_id"))
            return
        self._told_as_channel[group] = True
        log.info(
            "telegram: in group %s a message to the bot was posted as the channel '%s' and "
            "is not answered: the bot answers people, not channels (post as yourself)",
            group,
            as_channel,
        )

    async def _put(self, data: dict[str, Any]) -> None:
        """A webhook's update: read, then journaled and put on the bus (an album's part
        once its album is complete)."""
        await self._migrations([data])
        await self.held_albums.put(data)
        self._worked = time.time()
        self.link.succeeded()

    async def _journal(self, msg: InboundMessage) -> None:
        assert self._put_inbound is not None
        await self._put_inbound(msg)

    async def send(self, msg: OutboundMessage) -> Sent:
        if is_draft(msg.preview_id):  # a draft is no message to edit: the answer is posted
            msg = dataclasses.replace(msg, preview_id=None)
        return await self.sender.send(msg)

    async def typing(self, key: ChatKey, message_id: str | None = None) -> None:
        await self.sender.typing(key)

    def upload_limit(self) -> int:
        return MAX_UPLOAD_BYTES  # sendDocument through the Bot API

    async def upload(self, key: ChatKey, name: str, data: bytes, caption: str = "") -> Sent:
        return await self.sender.upload(key, name, data, caption)

    # -- streamed previews (SupportsPreview; the final goes through send) ------------

    def preview_limit(self, key: ChatKey) -> int:
        return MAX_CHARS

    def preview_interval(self, key: ChatKey, configured: float) -> float:
        return configured

    async def post_preview(self, key: ChatKey, text: str, reply_to: str | None) -> str:
        return await self.previews.post(key, text, reply_to)

    async def edit_preview(self, key: ChatKey, message_id: str, text: str) -> None:
        await self.previews.edit(key, message_id, text)

    async def delete_preview(self, key: ChatKey, message_id: str) -> None:
        await self.previews.delete(key, message_id)

    async def download(self, file_id: str) -> bytes:
        """A file the user sent (Attachment.file_id), fetched through getFile."""
        try:
            file = await self.sender.call(lambda: self.bot.get_file(file_id))
            return bytes(await file.download_as_bytearray())
        except TelegramError as exc:
            raise ChannelError(f"telegram file {file_id} unavailable: {exc.message}") from exc

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self.webhook.accepting = False
        await self.held_albums.stop()
        with contextlib.suppress(TelegramError, RuntimeError):
            await self.bot.shutdown()


def _why(exc: BaseException, token: str) -> str:
    """A failure's kind and text, without the token (``Conflict: terminated by other
    getUpdates request ...``, ``NetworkError: aiohttp...``)."""
    return f"{type(exc).__name__}: {redact(exc, token)}"


def webhook_problem(info: WebhookInfo, url: str, worked_at: float) -> str:
    """What getWebhookInfo says is wrong with our webhook ("" when nothing): it points
    elsewhere, or Telegram's last delivery failed after the last one that reached us."""
    if info.url != url:
        now = info.url or "no webhook (something switched the bot to polling)"
        return f"Telegram's webhook is now {now}, not {url}"
    failed = info.last_error_date
    if failed is not None and failed.timestamp() > worked_at:
        pending = info.pending_update_count
        return f"Telegram cannot deliver ({pending} updates waiting): {info.last_error_message}"
    return ""
