"""Streamed previews on Telegram: sendMessage, then editMessageText (SupportsPreview);
in private chats, with ``telegram_drafts = true``, a draft (sendMessageDraft) instead.

A preview call never waits out flood control: RetryAfter becomes PreviewRateLimited at
once, and the core pauses that chat's previews only (PTB's AIORateLimiter would halt
every request of the bot; it is not used). "Message is not modified" is success. The
final answer replaces the preview through :meth:`TelegramSender.send` (``preview_id``).

A draft (Bot API 9.5, PTB's ``send_message_draft``) is not a message: Telegram shows it
as the bot's reply being written and drops it 30 seconds after its last update; only
sendMessage makes the message. So the final answer of a drafted preview is posted new
through the outbox, once (the adapter drops a draft's ``preview_id``, see
:func:`is_draft`), and nothing is left to delete after a crash: the draft lapses, and a
replayed turn drafts into the same draft id (the answered message's).
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from typing import Any

from telegram.error import BadRequest, RetryAfter, TelegramError

from bot.errors import ChannelError, PreviewGone, PreviewRateLimited
from bot.messages import ChatKey
from channels.format import utf16_len
from channels.shown import ShownPreviews
from channels.telegram.rawbot import RawBot
from channels.telegram.send import MAX_CHARS, chat_ref, gone, not_modified, redact, retry_after_s

DRAFT = "draft:"  # a preview id naming a draft, not a message
MAX_DRAFT_ID = 2**31 - 1


def fit(text: str) -> str:
    """At most 4,096 UTF-16 units (an emoji is two), cut with an ellipsis."""
    if utf16_len(text) <= MAX_CHARS:
        return text
    while utf16_len(text) > MAX_CHARS - 1:
        text = text[: len(text) - max(1, (utf16_len(text) - MAX_CHARS) // 2)]
    return text + "…"


def where(key: ChatKey) -> dict[str, Any]:
    params: dict[str, Any] = {"chat_id": chat_ref(key.chat_id)}
    if key.thread_id:
        params["message_thread_id"] = int(key.thread_id)
    return params


def is_draft(preview_id: str | None) -> bool:
    return preview_id is not None and preview_id.startswith(DRAFT)


def private(key: ChatKey) -> bool:
    """A private chat's id is its user's, positive; groups and channels are negative."""
    return key.chat_id.isdigit()


def draft_id(reply_to: str | None) -> int:
    """The answered message's id (a replayed turn continues the same draft), else random;
    never zero, which the Bot API refuses."""
    if reply_to is not None and reply_to.isdigit() and 0 < int(reply_to) <= MAX_DRAFT_ID:
        return int(reply_to)
    return 1 + secrets.randbelow(MAX_DRAFT_ID)


class TelegramPreviews:
    def __init__(
        self, bot: RawBot, *, drafts: bool = False, shown: ShownPreviews | None = None
    ) -> None:
        self._bot = bot
        self._drafts = drafts
        self.shown = shown or ShownPreviews()

    @contextlib.contextmanager
    def _mapped(self) -> Iterator[None]:
        """Flood control -> PreviewRateLimited; any other failure -> ChannelError."""
        try:
            yield
        except RetryAfter as exc:
            raise PreviewRateLimited("Telegram flood control", retry_after_s(exc)) from exc
        except TelegramError as exc:
            raise ChannelError(f"Telegram preview failed: {redact(exc, self._bot.token)}") from exc

    async def post(self, key: ChatKey, text: str, reply_to: str | None) -> str:
        if self._drafts and private(key):
            draft = draft_id(reply_to)
            await self._draft(key, draft, text)
            return f"{DRAFT}{draft}"
        shown = fit(text)
        params = {**where(key), "text": shown}
        if reply_to is not None and reply_to.isdigit():
            params["reply_parameters"] = {
                "message_id": int(reply_to),
                "allow_sending_without_reply": True,
            }
        with self._mapped():
            message_id = await self._bot.send_text(**params)
        self.shown.showing(key, message_id, shown)
        return message_id

    async def edit(self, key: ChatKey, message_id: str, text: str) -> None:
        if is_draft(message_id):
            await self._draft(key, int(message_id.removeprefix(DRAFT)), text)
            return
        shown = fit(text)
        params = {"chat_id": chat_ref(key.chat_id), "message_id": int(message_id), "text": shown}
        self.shown.forget(key, message_id)  # unknown until Telegram says it took the edit
        with self._mapped():
            try:
                await self._bot.edit_text(**params)
            except BadRequest as exc:
                if gone(exc):
                    raise PreviewGone(f"Telegram: {exc.message}") from exc
                if not not_modified(exc):
                    raise ChannelError(f"Telegram preview edit refused: {exc.message}") from exc
        self.shown.showing(key, message_id, shown)

    async def delete(self, key: ChatKey, message_id: str) -> None:
        if is_draft(message_id):
            return  # a draft cannot be taken back; it lapses 30 s after its last update
        with self._mapped():
            try:
                await self._bot.delete_message(chat_ref(key.chat_id), int(message_id))
            except BadRequest as exc:
                if not gone(exc):
                    raise ChannelError(f"Telegram preview delete refused: {exc.message}") from exc

    async def _draft(self, key: ChatKey, draft: int, text: str) -> None:
        thread = int(key.thread_id) if key.thread_id else None
        with self._mapped():
            await self._bot.send_message_draft(
                int(key.chat_id), draft, fit(text), message_thread_id=thread
            )
