"""The unsummarized tail of each busy session, kept in memory by the session store.

Every turn starts from the stored messages after the archived summary's cursor. Reading
and decoding them again on every turn was the largest single piece of a turn's database
work (about 0.3 ms for 50 rows on the bench machine), although the daemon itself wrote
each of those rows a moment earlier: one daemon owns the database file, and only
:class:`bot.store.sessions.SessionStore` writes messages, so it keeps the tail current as
it writes (appends extend it, a new summary trims it, ``/new`` drops it).

Bounded by rows, not sessions: the least recently used sessions go first once the cache
holds ``max_rows`` messages, so a daemon with many chats keeps the busy ones and its
memory stays flat. A session that falls out is read from the database again.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Row = tuple[int, dict[str, Any]]

MAX_ROWS = 20_000


@dataclass(slots=True)
class Tail:
    """Stored rows after the summary cursor, oldest first; ``complete``: all of them are
    here (else only the newest ``keep``, as many as the read that loaded them asked for)."""

    rows: list[Row]
    complete: bool
    keep: int | None


class TailCache:
    def __init__(self, max_rows: int = MAX_ROWS) -> None:
        self._tails: OrderedDict[int, Tail] = OrderedDict()
        self._max_rows = max_rows
        self._size = 0

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
        self._tails[sid] = Tail(list(rows), complete, keep)
        self._size += len(rows)
        self._evict()

    def extend(self, sid: int, rows: Sequence[Row]) -> None:
        """Rows just stored; only the newest ``keep`` stay (the tail is then not complete)."""
        tail = self._tails.get(sid)
        if tail is None:
            return
        tail.rows.extend(rows)
        self._size += len(rows)
        if tail.keep is not None and len(tail.rows) > tail.keep:
            cut = len(tail.rows) - tail.keep
            del tail.rows[:cut]
            tail.complete = False
            self._size -= cut
        self._evict()

    def trim(self, sid: int, through: int) -> None:
        """A summary now covers the rows up to ``through``: they leave the tail."""
        tail = self._tails.get(sid)
        if tail is None:
            return
        kept = [r for r in tail.rows if r[0] > through]
        self._size -= len(tail.rows) - len(kept)
        tail.rows = kept

    def drop(self, sid: int) -> None:
        tail = self._tails.pop(sid, None)
        if tail is not None:
            self._size -= len(tail.rows)

    @property
    def size(self) -> int:
        """Rows held, over every session."""
        return self._size

    def _evict(self) -> None:
        while self._size > self._max_rows and len(self._tails) > 1:
            _, tail = self._tails.popitem(last=False)
            self._size -= len(tail.rows)
