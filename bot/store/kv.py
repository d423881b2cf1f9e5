"""A small durable key-value table for adapter state (polling offsets and the like)."""

from __future__ import annotations

import functools
import sqlite3

from bot.store.db import Database

_SET = (
    "INSERT INTO kv (key, value) VALUES (?, ?)"
    " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)


def _set(conn: sqlite3.Connection, row: tuple[str, str]) -> None:
    conn.execute(_SET, row)


class KeyValueStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, key: str, default: str | None = None) -> str | None:
        row = await self._db.fetchone("SELECT value FROM kv WHERE key = ?", (key,))
        return str(row["value"]) if row else default

    async def set(self, key: str, value: str) -> None:
        """One row: shares a commit with the turns' small pieces (a polling offset is
        written after every batch of updates)."""
        await self._db.run_together(functools.partial(_set, row=(key, value)))

    async def delete(self, key: str) -> None:
        await self._db.execute("DELETE FROM kv WHERE key = ?", (key,))
