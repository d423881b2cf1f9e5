"""The durable inbox: every accepted message is journaled before it is acknowledged.

A channel commits its platform offset only after ``accept`` returns, and a message
leaves the inbox only when its turn finished, so neither a restart nor a SIGKILL
mid-turn loses it; the unique (chat, message id) key makes redelivery a no-op.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Sequence
from datetime import datetime

from bot.messages import InboundMessage, inbound_from_json, to_json, utcnow
from bot.store.db import Database
from bot.store.group import GroupCommit

_ROW = "channel = ? AND chat_id = ? AND thread_id = ? AND message_id = ?"


def row_key(msg: InboundMessage) -> tuple[str, str, str, str]:
    return (msg.key.channel, msg.key.chat_id, msg.key.thread_id or "", msg.message_id)


_JOURNAL = (
    "INSERT OR IGNORE INTO inbox (channel, chat_id, thread_id, message_id, payload,"
    " received_at) VALUES (?, ?, ?, ?, ?, ?)"
)


def _journal(conn: sqlite3.Connection, row: tuple[str, ...]) -> bool:
    return conn.execute(_JOURNAL, row).rowcount > 0


_STARTED = f"UPDATE inbox SET attempts = attempts + 1 WHERE {_ROW} RETURNING attempts"
_FINISH = f"UPDATE inbox SET status = ?, done_at = ? WHERE {_ROW}"
_INTERRUPTED = f"UPDATE inbox SET attempts = attempts - 1 WHERE {_ROW} AND attempts > 0"


def _count_attempt(conn: sqlite3.Connection, key: tuple[str, ...]) -> int:
    row = conn.execute(_STARTED, key).fetchone()
    return int(row[0]) if row else 1  # not journaled (e.g. an in-memory bus): a first try


def _finish(conn: sqlite3.Connection, row: tuple[str, ...]) -> None:
    conn.execute(_FINISH, row)


class InboxStore:
    def __init__(self, db: Database) -> None:
        self._db = db
        # Durable: the channel acknowledges the platform once accept returns. Messages
        # arriving together share the fsync (see bot.store.group).
        self._journal = GroupCommit(db, _journal, durable=True)

    async def accept(self, msg: InboundMessage) -> bool:
        """Journal a message; False when the same (chat, message id) was seen before."""
        return await self._journal.submit(
            (*row_key(msg), to_json(msg), msg.received_at.isoformat())
        )

    async def done(self, msg: InboundMessage) -> None:
        await self._finish(msg, "done")

    async def failed(self, msg: InboundMessage) -> None:
        """Retire a message whose turns kept dying: never replayed again."""
        await self._finish(msg, "failed")

    async def started(self, msg: InboundMessage) -> int:
        """Count one more turn attempt (committed before the turn runs); returns the count."""
        return await self._db.run_together(functools.partial(_count_attempt, key=row_key(msg)))

    async def interrupted(self, msgs: Sequence[InboundMessage]) -> None:
        """Started turns stopped because their chat moved to another replica or the daemon
        is stopping gracefully: those starts are not counted against their messages (see
        :meth:`started`). One transaction for all: a stop gives back every running turn's
        start at once."""
        await self._db.executemany(_INTERRUPTED, [row_key(m) for m in msgs])

    async def _finish(self, msg: InboundMessage, status: str) -> None:
        row = (status, utcnow().isoformat(), *row_key(msg))
        await self._db.run_together(functools.partial(_finish, row=row))

    async def pending(self) -> list[InboundMessage]:
        """Accepted but unanswered messages, in arrival order (replayed at start)."""
        rows = await self._db.fetchall(
            "SELECT payload FROM inbox WHERE status = 'pending' ORDER BY id"
        )
        return [inbound_from_json(r["payload"]) for r in rows]

    async def pending_ids(self) -> list[int]:
        rows = await self._db.fetchall("SELECT id FROM inbox WHERE status = 'pending' ORDER BY id")
        return [int(r["id"]) for r in rows]

    async def read_pending(self, ids: Sequence[int]) -> list[tuple[int, InboundMessage]]:
        sql = "SELECT id, payload FROM inbox WHERE status = 'pending' AND id IN ({})"
        rows = await self._db.fetch_ids(sql, ids)
        return [(int(r["id"]), inbound_from_json(r["payload"])) for r in rows]

    async def prune(self, older_than: datetime) -> int:
        """Forget finished messages; redelivery dedup only needs recent ones."""
        return await self._db.execute_count(
            "DELETE FROM inbox WHERE status != 'pending' AND COALESCE(done_at, received_at) < ?",
            (older_than.isoformat(),),
        )
