"""Telegram albums: photos and files a user sends together arrive as one update each,
sharing a ``media_group_id``, with the caption on one of them. Read one by one they were
one turn per part: three answers to "which one is best?", the first written having
seen one picture (and in a group only the captioned part was addressed, so the others
were dropped). Here an album is read as one message carrying every part's files.

Telegram does not say how many parts an album has, and they may come over two polls,
so an album is held until ``wait_s`` after its first part was fetched: its updates (and
its chat's after it) are not journaled, the offset stays before them, and the next poll
fetches them again with any parts that came since.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.messages import InboundMessage
from channels.telegram.normalize import attachments_of

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
    every part's files, in the order they were sent."""
    lead = next((p for p in parts if p["message"].get("caption")), parts[0])
    msg = read(lead)
    if msg is None:
        return None
    files = tuple(a for p in parts for a in _files(p))
    return dataclasses.replace(msg, attachments=files) if files else msg


def _files(part: Update) -> tuple[Any, ...]:
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
