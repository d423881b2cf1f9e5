"""The unsummarized tail of each busy session, kept in memory by the session store.

Every turn starts from the stored messages after the archived summary's cursor. Reading
and decoding them again on every turn was the largest single piece of a turn's database
work (about 0.3 ms for 50 rows on the bench machine), although the daemon itself wrote
each of those rows a moment earlier: one daemon owns the database file, and only
:class:`bot.store.sessions.SessionStore` writes messages, so it keeps the tail current as
it writes (appends extend it, a new summary trims it, ``/new`` drops it).

Bounded by rows and by bytes, not sessions: the least recently used sessions go first
once the cache holds ``max_rows`` messages or ``max_bytes`` of them (their
:func:`footprint`), so a daemon with many chats keeps the busy ones and its memory stays
flat however long the messages are (a tool result may hold 16,000 characters, a user's
message tens of thousands: rows alone would let 20,000 of those take hundreds of MB). A
session that falls out is read from the database again.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

Row = tuple[int, dict[str, Any]]

MAX_ROWS = 20_000
MAX_BYTES = 24 * 1024 * 1024  # the rows' footprint over every session
_sizeof = sys.getsizeof


def footprint(value: Any) -> int:
    """The bytes ``value`` takes in memory, with what it holds: ``sys.getsizeof`` of it
    and, through dicts, lists and tuples, of their items (a dict's keys are the same few
    interned names in every message, so they are not counted). Exact for strings, which
    are most of a message, and cheap: nothing is copied or encoded."""
    size = _sizeof(value)
    kind = type(value)
    if kind is dict:
        for item in value.values():
            size += _sizeof(item) if type(item) is str else footprint(item)
    elif kind is list or kind is tuple:
        for item in value:
            size += _sizeof(item) if type(item) is str else footprint(item)
    return size


def rows_footprint(rows: Iterable[Row]) -> int:
    return sum(footprint(row) for row in rows)


@dataclass(slots=True)
class Tail:
    """Stored rows after the summary cursor, oldest first; ``complete``: all of them are
    here (else only the newest ``keep``, as many as the read that loaded them asked for)."""

    rows: list[Row]
    complete: bool
    keep: int | None
    bytes: int = 0  # the rows' footprint


class TailCache:
    def __init__(self, max_rows: int = MAX_ROWS, max_bytes: int = MAX_BYTES) -> None:
        self._tails: OrderedDict[int, Tail] = OrderedDict()
        self._max_rows = max_rows
        self._max_bytes = max_bytes
        self._size = 0
        self._bytes = 0

    def newest(self, sid: int, limit: int | None) -> list[Row] | None:
        """The newest ``limit`` rows (all when None) when the cache can answer exactly."""
        tail = self._tails.get(sid)
        if tail is None or not (tail.complete or (limit is not None and len(tail.rows) >= limit)):
            return None
        self._tails.move_to_end(sid)
        rows = tail.rows
        return list(rows if limit is None or limit >= len(rows) else rows[len(rows) - limit :])

    def load(self, sid: int, rows: Sequence[Row], *, complete: bool, keep: int | None) -> None:
        """What a database read found: the newest rows after the cursor, at most ``keep``
        of them (``complete``: there are no more)."""
        self.drop(sid)
        tail = self._tails[sid] = Tail(list(rows), complete, keep, rows_footprint(rows))
        self._size += len(rows)
        self._bytes += tail.bytes
        self._evict()

    def extend(self, sid: int, rows: Sequence[Row]) -> None:
        """Rows just stored; only the newest ``keep`` stay (the tail is then not complete)."""
        tail = self._tails.get(sid)
        if tail is None:
            return
        tail.rows.extend(rows)
        self._grow(tail, len(rows), rows_footprint(rows))
        if tail.keep is not None and len(tail.rows) > tail.keep:
            cut = len(tail.rows) - tail.keep
            self._grow(tail, -cut, -rows_footprint(tail.rows[:cut]))
            del tail.rows[:cut]
            tail.complete = False
        self._evict()

    def trim(self, sid: int, through: int) -> None:
        """A summary now covers the rows up to ``through``: they leave the tail."""
        tail = self._tails.get(sid)
        if tail is None:
            return
        gone = [r for r in tail.rows if r[0] <= through]
        if gone:
            tail.rows = [r for r in tail.rows if r[0] > through]
            self._grow(tail, -len(gone), -rows_footprint(gone))

    def drop(self, sid: int) -> None:
        tail = self._tails.pop(sid, None)
        if tail is not None:
            self._size -= len(tail.rows)
            self._bytes -= tail.bytes

    @property
    def size(self) -> int:
        """Rows held, over every session."""
        return self._size

    @property
    def bytes(self) -> int:
        """The footprint of the rows held, over every session."""
        return self._bytes

    def _grow(self, tail: Tail, rows: int, size: int) -> None:
        tail.bytes += size
        self._size += rows
        self._bytes += size

    def _evict(self) -> None:
        while (self._size > self._max_rows or self._bytes > self._max_bytes) and len(
            self._tails
        ) > 1:
            _, tail = self._tails.popitem(last=False)
            self._size -= len(tail.rows)
            self._bytes -= tail.bytes
