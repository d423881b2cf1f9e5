"""OutboundMessage -> Telegram sendMessage calls: chunking, formatting, error mapping.

The model writes Markdown; Telegram renders text + entities, so each chunk is converted
with telegramify-markdown (offsets in UTF-16 units) and resent as plain text when
Telegram refuses the entities. Errors are sorted for Delivery: a permanent refusal
raises DeliveryRejected (given up), ChatGone when the chat itself refuses the bot for
good (kicked, blocked, chat not found: its repeats end), ChatMoved when a group was
upgraded to a supergroup (the message and the chat's reminders go to its new id);
anything else ChannelError (retried from the outbox).

Parameters are handed to PTB as the Bot API's JSON (dicts, not MessageEntity or
ReplyParameters objects): PTB turns every object back into a dict before sending, and
building and unbuilding them was a fifth of a reply's CPU on our side. An empty entity
list is left out rather than sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import re
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from telegram import InputFile, Message
from telegram.constants import ChatAction
from telegram.error import BadRequest, ChatMigrated, Forbidden, RetryAfter, TelegramError

from bot.errors import ChannelError, ChatGone, ChatMoved, DeliveryRejected
from bot.messages import ChatKey, OutboundMessage
from channels.base import Sent, StateStore
from channels.format import PartsProgress, split_message, utf16_len
from channels.markdown_code import outside_code
from channels.shown import ShownPreviews
from channels.telegram.rawbot import RawBot

log = logging.getLogger(__name__)

MAX_CHARS = 4096  # Telegram's limit per message, in UTF-16 code units
MAX_CAPTION = 1024  # a file's caption
MAX_PHOTO_BYTES = 10_000_000  # sendPhoto; a larger picture goes as a document
MAX_UPLOAD_BYTES = 50_000_000  # sendDocument through the Bot API
PHOTO_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp")
MIN_BUDGET = 256  # the smallest Markdown part a converted part that grew is split into
USER_LINK = "tg://user"  # [name](tg://user?id=123): an inline mention by id
_ANGLE = re.compile(r"(?<!\\)(\\*)<")  # a "<" and the backslashes before it
T = TypeVar("T")


def retry_after_s(exc: RetryAfter) -> float:
    """Seconds to wait; PTB returns int, float or timedelta depending on PTB_TIMEDELTA."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def redact(error: object, token: str) -> str:
    """An error's text without the bot token (transport errors may quote the URL)."""
    text = str(error)
    return text.replace(token, "<token>") if token else text


def chat_ref(chat_id: str) -> int | str:
    return int(chat_id) if chat_id.lstrip("-").isdigit() else chat_id


def keep_angle_brackets(markdown: str) -> str:
    """``markdown`` with every ``<`` outside code escaped, so it reaches the user as typed
    (one escaped already stays so: a second backslash would show)."""
    return outside_code(markdown, lambda text: _ANGLE.sub(_escape_angle, text))


def _escape_angle(found: re.Match[str]) -> str:
    backslashes = found.group(1)
    return found.group() if len(backslashes) % 2 else backslashes + "\\<"


@dataclass(frozen=True, slots=True)
class Rendered:
    """One part of an answer: its Markdown (sent as written when Telegram refuses the
    formatting) and what it converts to."""

    markdown: str
    text: str
    entities: list[dict[str, Any]]


def rendered_parts(markdown: str, budget: int = MAX_CHARS) -> list[Rendered]:
    """The answer's parts, each of at most ``MAX_CHARS`` once converted. Conversion can
    grow a part (a table's columns are padded): such a part is split again, smaller,
    rather than sent as raw Markdown."""
    parts: list[Rendered] = []
    for chunk in split_message(markdown, budget, measure=utf16_len):
        done = render(chunk)
        size = utf16_len(done.text)
        smaller = min(budget - 1, budget * MAX_CHARS * 9 // (10 * size))
        if size > MAX_CHARS and smaller >= MIN_BUDGET:
            parts += rendered_parts(chunk, smaller)
        elif size > MAX_CHARS:  # cannot happen with a sane converter: plain text, whole
            parts += [
                Rendered(p, p, []) for p in split_message(chunk, MAX_CHARS, measure=utf16_len)
            ]
        else:
            parts.append(done)
    return parts


def caption_part(markdown: str) -> Rendered:
    """A file's caption as a message is rendered, then cut to ``MAX_CAPTION`` UTF-16
    units (Telegram counts those, not characters: 995 characters with 30 emoji are
    1,025 and refused), its entities cut with it."""
    done = render(markdown)
    if utf16_len(done.text) <= MAX_CAPTION:
        return done
    units = MAX_CAPTION - 1  # and an ellipsis
    cut = done.text.encode("utf-16-le", "surrogatepass")[: 2 * units]
    text = cut.decode("utf-16-le", "ignore")  # a halved surrogate pair goes whole
    units = utf16_len(text)
    entities = [
        {**e, "length": min(e["length"], units - e["offset"])}
        for e in done.entities
        if e["offset"] < units
    ]
    return Rendered(done.markdown, text + "\N{HORIZONTAL ELLIPSIS}", entities)


def render(chunk: str) -> Rendered:
    """Markdown -> plain text and entities; the chunk itself when conversion fails."""
    import telegramify_markdown  # on the first reply, not on the way to ready

    try:
        text, entities = telegramify_markdown.convert(keep_angle_brackets(chunk), config=_config())
    except Exception:  # a converter bug must not lose the reply
        log.exception("markdown conversion failed; sending plain text")
        return Rendered(chunk, chunk, [])
    if not text.strip():
        return Rendered(chunk, chunk, [])
    # The Bot API's MessageEntity objects; a link to tg://user?id=... is a mention that
    # notifies that user, so the model (steered by whoever it read) pings no one by id:
    # its words stay, without the link.
    kept = [e.to_dict() for e in entities if not _mentions_user(e.url)]
    return Rendered(chunk, text, kept)


@functools.cache
def _config() -> Any:
    """The converter's settings: its own, but an open task ("- [ ]") shows an empty box
    (it drew a box with a check mark, the same as a done one at a glance)."""
    from telegramify_markdown.config import RenderConfig

    config = RenderConfig.isolated()
    config.markdown_symbol.task_uncompleted = "\N{BALLOT BOX}"
    return config


def _mentions_user(url: str | None) -> bool:
    return url is not None and url.strip().lower().startswith(USER_LINK)


# A chat that refuses the bot for good: removed from a group or channel, blocked by the
# person, a deleted account or group, an id Telegram no longer knows.
CHAT_GONE = (
    "bot was kicked",
    "bot was blocked",
    "bot is not a member",
    "deactivated",
    "chat was deleted",
    "chat not found",
)
GONE = ("message to edit not found", "message to delete not found", "message can't be edited")


def not_modified(exc: BadRequest) -> bool:
    return "not modified" in exc.message.lower()


def gone(exc: BadRequest) -> bool:
    """The message cannot be edited any more: deleted, too old, never ours."""
    return any(words in exc.message.lower() for words in GONE)


def refusal(what: str, exc: TelegramError) -> DeliveryRejected:
    """A refusal for good; ChatGone when it is the chat that refuses the bot."""
    text = f"Telegram refused {what}: {exc.message}"
    if any(words in exc.message.lower() for words in CHAT_GONE):
        return ChatGone(text)
    return DeliveryRejected(text)


def _with_caption(common: dict[str, Any], caption: str) -> list[dict[str, Any]]:
    """An upload's parameters: its caption formatted, then plain (should Telegram refuse
    the formatting, as a message is resent plain)."""
    if not caption.strip():
        return [common]
    shown = caption_part(caption)
    plain = {**common, "caption": shown.text}
    return [{**plain, "caption_entities": shown.entities}, plain] if shown.entities else [plain]


def _is_format_error(exc: BadRequest) -> bool:
    text = exc.message.lower()
    return "parse entities" in text or "entity" in text or "entities" in text


class TelegramSender:
    def __init__(
        self,
        bot: RawBot,
        *,
        max_flood_wait_s: float = 30.0,
        max_flood_waits: int = 5,
        state: StateStore | None = None,
        shown: ShownPreviews | None = None,
    ):
        self._bot = bot
        self._shown = shown or ShownPreviews()  # what previews show (TelegramPreviews')
        self._max_wait = max_flood_wait_s
        self._max_waits = max_flood_waits
        # The parts of a long answer already out survive a restart: Telegram cannot be
        # asked what was posted, so only this record keeps them from going out again.
        self._parts = PartsProgress(state=state, prefix="telegram")

    async def send(self, msg: OutboundMessage) -> Sent:
        chunks = rendered_parts(msg.text)
        if not chunks:
            log.info("empty reply to %s not sent", msg.key)
            return Sent()
        reply_to = int(msg.reply_to) if msg.reply_to and msg.reply_to.isdigit() else None
        preview = msg.preview_id

        def post_part(i: int) -> Awaitable[str]:
            if i == 0 and preview is not None:
                return self._replace(msg.key, preview, chunks[0], reply_to)
            return self._send_chunk(msg.key, chunks[i], reply_to if i == 0 else None)

        return await self._parts.post(msg.delivery_key, len(chunks), post_part)

    async def _replace(
        self, key: ChatKey, preview: str, chunk: Rendered, reply_to: int | None
    ) -> str:
        """The answer's first part edited into the streamed preview (not modified is
        success); a preview that is gone is deleted and the part posted new."""
        text, entities = chunk.text, chunk.entities
        if self._shown.already(key, preview, text) and not entities:
            return preview  # the preview already reads as the answer
        params: dict[str, Any] = {"chat_id": chat_ref(key.chat_id), "message_id": int(preview)}
        attempts = [{"text": text, **({"entities": entities} if entities else {})}]
        if entities:
            attempts.append({"text": chunk.markdown})  # Telegram refused the formatting
        for body in attempts:
            try:
                await self.call(lambda body=body: self._bot.edit_text(**params, **body))  # type: ignore[misc]
                return preview
            except BadRequest as exc:
                if not_modified(exc):
                    return preview
                if gone(exc):
                    break
                if not _is_format_error(exc):
                    raise refusal("the edit", exc) from exc
        log.info("preview %s in %s is gone; the answer is posted new", preview, key)
        with contextlib.suppress(TelegramError):
            await self._bot.delete_message(chat_ref(key.chat_id), int(preview))
        return await self._send_chunk(key, chunk, reply_to)

    async def _send_chunk(self, key: ChatKey, chunk: Rendered, reply_to: int | None) -> str:
        text, entities = chunk.text, chunk.entities
        common: dict[str, Any] = {"chat_id": chat_ref(key.chat_id)}
        if key.thread_id:
            common["message_thread_id"] = int(key.thread_id)
        if reply_to is not None:
            common["reply_parameters"] = {
                "message_id": reply_to,
                "allow_sending_without_reply": True,
            }
        formatted = {"text": text, **common, **({"entities": entities} if entities else {})}
        try:
            return await self.call(lambda: self._bot.send_text(**formatted))
        except BadRequest as exc:
            if not entities or not _is_format_error(exc):
                raise refusal("the message", exc) from exc
            log.warning("Telegram refused the formatting in %s (%s); sending plain text", key, exc)
        try:
            return await self.call(lambda: self._bot.send_text(text=chunk.markdown, **common))
        except BadRequest as exc:
            raise refusal("the message", exc) from exc

    async def upload(self, key: ChatKey, name: str, data: bytes, caption: str = "") -> Sent:
        """A picture as a photo (sendPhoto: shown inline, at most 10 MB), anything else
        as a document (sendDocument, at most 50 MB through the Bot API)."""
        photo = name.lower().endswith(PHOTO_SUFFIXES) and len(data) <= MAX_PHOTO_BYTES
        common: dict[str, Any] = {"chat_id": chat_ref(key.chat_id)}
        if key.thread_id:
            common["message_thread_id"] = int(key.thread_id)
        file = InputFile(data, filename=name)
        attempts = _with_caption(common, caption)
        for params in attempts:
            try:
                sent = await self.call(self._file_call(photo, file, params))
                return Sent((str(sent.message_id),))
            except BadRequest as exc:
                if params is attempts[-1] or not _is_format_error(exc):
                    raise refusal(f"the file {name}", exc) from exc
                log.warning("Telegram refused the caption's formatting in %s (%s)", key, exc)
        raise AssertionError("unreachable")

    def _file_call(
        self, photo: bool, file: InputFile, params: dict[str, Any]
    ) -> Callable[[], Awaitable[Message]]:
        if photo:
            return lambda: self._bot.send_photo(photo=file, **params)
        return lambda: self._bot.send_document(document=file, **params)

    async def typing(self, key: ChatKey) -> None:
        thread = int(key.thread_id) if key.thread_id else None
        await self._bot.send_chat_action(
            chat_ref(key.chat_id), ChatAction.TYPING, message_thread_id=thread
        )

    async def call(self, request: Callable[[], Awaitable[T]]) -> T:
        """One Bot API call: waits out short flood control, maps the rest for Delivery.

        BadRequest is left to the caller (some are recoverable, e.g. bad formatting).
        """
        for attempt in itertools.count(1):
            try:
                return await request()
            except RetryAfter as exc:
                wait = retry_after_s(exc)
                if attempt > self._max_waits or wait > self._max_wait:
                    raise ChannelError(f"Telegram flood control: retry in {wait:g} s") from exc
                log.warning("Telegram flood control: waiting %.1f s (attempt %d)", wait, attempt)
                await asyncio.sleep(wait)
            except BadRequest:
                raise
            except ChatMigrated as exc:  # a group upgraded to a supergroup: its new id
                moved = f"Telegram moved the chat to {exc.new_chat_id}: {exc.message}"
                raise ChatMoved(moved, chat_id=str(exc.new_chat_id)) from exc
            except Forbidden as exc:  # blocked, kicked, no rights
                raise refusal("the chat", exc) from exc
            except TelegramError as exc:  # network, 5xx, timeouts: retry from the outbox
                raise ChannelError(f"Telegram API error: {redact(exc, self._bot.token)}") from exc
        raise AssertionError("unreachable")
