"""Streamed previews on Telegram: sendMessage, then editMessageText (SupportsPreview).

A preview call never waits out flood control: RetryAfter becomes PreviewRateLimited at
once, and the core pauses that chat's previews only (PTB's AIORateLimiter would halt
every request of the bot; it is not used). "Message is not modified" is success. The
final answer replaces the preview through :meth:`TelegramSender.send` (``preview_id``).
"""

from __future__ import annotations

from typing import Any

from telegram.error import BadRequest, RetryAfter, TelegramError

from bot.errors import ChannelError, PreviewRateLimited
from bot.messages import ChatKey
from channels.format import utf16_len
from channels.telegram.rawbot import RawBot
from channels.telegram.send import MAX_CHARS, chat_ref, gone, not_modified, redact, retry_after_s


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


class TelegramPreviews:
    def __init__(self, bot: RawBot) -> None:
        self._bot = bot

    async def post(self, key: ChatKey, text: str, reply_to: str | None) -> str:
        params = {**where(key), "text": fit(text)}
        if reply_to is not None and reply_to.isdigit():
            params["reply_parameters"] = {
                "message_id": int(reply_to),
                "allow_sending_without_reply": True,
            }
        try:
            return await self._bot.send_text(**params)
        except RetryAfter as exc:
            raise PreviewRateLimited("Telegram flood control", retry_after_s(exc)) from exc
        except TelegramError as exc:
            raise ChannelError(f"Telegram preview failed: {redact(exc, self._bot.token)}") from exc

    async def edit(self, key: ChatKey, message_id: str, text: str) -> None:
        params = {
            "chat_id": chat_ref(key.chat_id),
            "message_id": int(message_id),
            "text": fit(text),
        }
        try:
            await self._bot.edit_text(**params)
        except BadRequest as exc:
            if not not_modified(exc):
                raise ChannelError(f"Telegram preview edit refused: {exc.message}") from exc
        except RetryAfter as exc:
            raise PreviewRateLimited("Telegram flood control", retry_after_s(exc)) from exc
        except TelegramError as exc:
            raise ChannelError(f"Telegram preview failed: {redact(exc, self._bot.token)}") from exc

    async def delete(self, key: ChatKey, message_id: str) -> None:
        try:
            await self._bot.delete_message(chat_ref(key.chat_id), int(message_id))
        except BadRequest as exc:
            if not gone(exc):
                raise ChannelError(f"Telegram preview delete refused: {exc.message}") from exc
        except RetryAfter as exc:
            raise PreviewRateLimited("Telegram flood control", retry_after_s(exc)) from exc
        except TelegramError as exc:
            raise ChannelError(f"Telegram preview failed: {redact(exc, self._bot.token)}") from exc
