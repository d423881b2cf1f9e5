"""Telegram albums: photos and files a user sends together arrive as one update each,
sharing a ``media_group_id``, with the caption on one of them. Read one by one they were
one turn per part: three answers to "which one is best?", the first written having
seen one picture (and in a group only the captioned part was addressed, so the others
were dropped). Here an album is read as one message carrying every part's files.

Telegram does not say how many parts an album has, and they may come over two polls,
so an album is held until ``wait_s`` after its first part was fetched: its updates (and
its chat's after it) are not journaled, the offset stays before them, and the next poll
fetches them again with any parts that came since. A webhook delivers each part as a
request of its own: :class:`HeldAlbums` holds those requests instead.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.errors import ChannelError
from bot.messages import Attachment, InboundMessage
from channels.telegram.normalize import attachments_of, text_of

ALBUM_WAIT_S = 1.0  # after its first part was fetched, an album is taken as complete

Update = dict[str, Any]
Read = Callable[[Update], InboundMessage | None]


@dataclass(frozen=True, slots=True)
class Unit:
    """One message to journal: a plain update's, or an album's (several updates)."""

    update_ids: tuple[int, ...]
    msg: InboundMessage | None  # None: nothing to answer (acknowledged as it is)
    held_for: float = 0.0  # > 0: an album that may still grow, held this much longer


def album_of(update: Update) -> tuple[Any, str] | None:
    """(chat id, media group id) of an album's part; None for any other update."""
    m = update.get("message")
    if not isinstance(m, dict) or not m.get("media_group_id"):
        return None
    return (m["chat"]["id"], str(m["media_group_id"]))


def read_album(parts: Sequence[Update], read: Read) -> InboundMessage | None:
    """The album as the captioned part's message (the first part's if none is) carrying
    every part's files, in the order they were sent. Telegram lets every part have a
    caption of its own: with more than one, each is a line naming its file (only the
    first reached the model, "April: paid twice?" was dropped); the lead's, as read
    (in a group, the one whose mention addressed the bot), stays first."""
    lead = next((p for p in parts if p["message"].get("caption")), parts[0])
    msg = read(lead)
    if msg is None:
        return None
    files = [(p, a) for p in parts for a in _files(p)]
    if sum(1 for p in parts if p["message"].get("caption")) > 1:
        msg = dataclasses.replace(msg, text=_captions(parts, lead, msg.text, files))
    return dataclasses.replace(msg, attachments=tuple(a for _, a in files)) if files else msg


def _captions(
    parts: Sequence[Update], lead: Update, text: str, files: list[tuple[Update, Attachment]]
) -> str:
    """Each captioned part's caption as ``<its file>: <caption>``, the lead's as read
    (a reply's quote kept above it, a command left as it is)."""
    quote, _, body = text.partition("\n") if text.startswith("> replying to ") else ("", "", text)
    lines = [quote] if quote else []
    for part in parts:
        caption = body if part is lead else _caption(part)
        if part is lead and caption.startswith("/"):
            lines.append(caption)  # the first caption: a command stays parseable
        elif caption:
            named = ", ".join(_named(a, n) for n, (p, a) in enumerate(files, 1) if p is part)
            lines.append(f"{named or 'a part'}: {caption}")
    return "\n".join(lines)


def _named(attachment: Attachment, number: int) -> str:
    """How a caption line names its file: its name, else its kind and place ("photo 2")."""
    return attachment.name or f"{attachment.kind} {number}"


def _caption(part: Update) -> str:
    """A part's caption with its links' URLs; the bare caption for links of the wrong
    shape (a part is read here, outside the reading that skips a malformed update)."""
    try:
        return text_of(part["message"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return str(part["message"].get("caption") or "")


def _files(part: Update) -> tuple[Attachment, ...]:
    """A part's files; none for a part of the wrong shape (the rest still go)."""
    try:
        return attachments_of(part["message"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return ()


class Albums:
    """Groups a batch of updates into units; remembers when each album was first seen."""

    def __init__(self, wait_s: float = ALBUM_WAIT_S) -> None:
        self.wait_s = wait_s
        self._first_seen: dict[tuple[Any, str], float] = {}

    def units(self, updates: Sequence[Update], read: Read, now: float) -> list[Unit]:
        """The batch's units in the order of their first update."""
        parts: dict[tuple[Any, str], list[Update]] = {}
        order: list[Update | tuple[Any, str]] = []
        for update in updates:
            album = album_of(update)
            if album is None:
                order.append(update)
            else:
                if album not in parts:
                    order.append(album)
                parts.setdefault(album, []).append(update)
        self._first_seen = {a: self._first_seen.get(a, now) for a in parts}
        return [
            self._album(item, parts[item], read, now)
            if isinstance(item, tuple)
            else Unit((int(item["update_id"]),), read(item))
            for item in order
        ]

    def _album(self, album: tuple[Any, str], parts: list[Update], read: Read, now: float) -> Unit:
        ids = tuple(int(p["update_id"]) for p in parts)
        held_for = self._first_seen[album] + self.wait_s - now
        return Unit(ids, read_album(parts, read), max(0.0, held_for))


Put = Callable[[InboundMessage], Awaitable[None]]
REMEMBERED = 1024  # update ids of journaled albums kept, to answer a lone resend at once


@dataclass(slots=True)
class _Gathering:
    parts: list[Update]
    done: asyncio.Future[None]


def _sent_order(part: Update) -> int:
    uid = part.get("update_id")
    return uid if isinstance(uid, int) else 0


class HeldAlbums:
    """Webhook mode: each part of an album is a request of its own, most often all at
    once (Telegram keeps up to 40 connections open), so no poll batch groups them. Each
    part's request is held until its album is taken as complete (``wait_s`` after its
    first part came), the album journaled as one message, and only then answered: every
    part 200 together, or every part an error, so Telegram resends them all and nothing
    is half kept. Any other update goes through at once. A part resent after its album
    was journaled (its answer lost on the way) is acknowledged as it is: a second turn
    would answer some of the pictures again. Parts sent to two replicas behind a load
    balancer are two albums, as with no grouping."""

    def __init__(self, read: Read, put: Put, wait_s: float = ALBUM_WAIT_S) -> None:
        self.wait_s = wait_s
        self._read = read
        self._put = put
        self._open: dict[tuple[Any, str], _Gathering] = {}
        self._journaled: OrderedDict[Any, None] = OrderedDict()  # update ids, oldest first
        self._closing: set[asyncio.Task[None]] = set()

    async def put(self, update: Update) -> None:
        """Journal ``update``'s message; an album's part returns once its album is in."""
        album = album_of(update)
        if album is None:
            if (msg := self._read(update)) is not None:
                await self._put(msg)
            return
        uid = update.get("update_id")
        if uid in self._journaled:
            return
        gathering = self._open.get(album)
        if gathering is None:
            gathering = _Gathering([], asyncio.get_running_loop().create_future())
            self._open[album] = gathering
            task = asyncio.create_task(self._close(album, gathering), name="telegram-album")
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)
        if all(p.get("update_id") != uid for p in gathering.parts):  # not a resend of one held
            gathering.parts.append(update)
        await asyncio.shield(gathering.done)  # a request given up on leaves the album be

    async def _close(self, album: tuple[Any, str], gathering: _Gathering) -> None:
        """After ``wait_s``, the album as one message: journaled, then every part answered."""
        try:
            await asyncio.sleep(self.wait_s)
            del self._open[album]
            parts = sorted(gathering.parts, key=_sent_order)
            if (msg := read_album(parts, self._read)) is not None:
                await self._put(msg)
        except BaseException as exc:
            self._open.pop(album, None)
            stopped = isinstance(exc, asyncio.CancelledError)
            _refuse(gathering, ChannelError("stopped") if stopped else exc)
            if stopped:
                raise
            return
        for part in parts:
            self._journaled[part.get("update_id")] = None
        while len(self._journaled) > REMEMBERED:
            self._journaled.popitem(last=False)
        gathering.done.set_result(None)

    async def stop(self) -> None:
        """Albums still held are answered with an error: Telegram resends them later."""
        for task in list(self._closing):
            task.cancel()
        await asyncio.gather(*self._closing, return_exceptions=True)
        for gathering in self._open.values():  # its closer cancelled before it began
            _refuse(gathering, ChannelError("stopped"))
        self._open.clear()


def _refuse(gathering: _Gathering, exc: BaseException) -> None:
    """Every request held for the album fails with ``exc`` (Telegram resends them)."""
    if not gathering.done.done():
        gathering.done.set_exception(exc)
        gathering.done.exception()  # every held request may have gone: no warning
