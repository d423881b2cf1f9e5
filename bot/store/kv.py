"""A small durable key-value table for adapter state (polling offsets and the like)."""

from __future__ import annotations

import functools
import sqlite3
from datetime import datetime, timedelta

from bot.messages import utcnow
from bot.store.db import Database

_SET = (
    "INSERT INTO kv (key, value, expires_at) VALUES (?, ?, ?)"
    " ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at"
)


def _set(conn: sqlite3.Connection, row: tuple[str, str, str | None]) -> None:
    conn.execute(_SET, row)


class KeyValueStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, key: str, default: str | None = None) -> str | None:
        row = await self._db.fetchone("SELECT value FROM kv WHERE key = ?", (key,))
        return str(row["value"]) if row else default

    async def set(self, key: str, value: str, *, keep_for: timedelta | None = None) -> None:
        """One row: shares a commit with the turns' small pieces (a polling offset is
        written after every batch of updates). ``keep_for``: housekeeping drops the key
        that long after this write (None: kept until deleted)."""
        expires = (utcnow() + keep_for).isoformat() if keep_for is not None else None
        await self._db.run_together(functools.partial(_set, row=(key, value, expires)))

    async def delete(self, key: str) -> None:
        await self._db.execute("DELETE FROM kv WHERE key = ?", (key,))

    async def prune(self, now: datetime) -> int:
        """Drop the keys whose ``keep_for`` ran out by ``now``."""
        return await self._db.execute_count(
            "DELETE FROM kv WHERE expires_at IS NOT NULL AND expires_at <= ?", (now.isoformat(),)
        )
