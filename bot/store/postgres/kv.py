"""The key-value table on PostgreSQL (adapter state: polling offsets and the like)."""

from __future__ import annotations

from datetime import datetime, timedelta

from bot.messages import utcnow
from bot.store.postgres.database import PostgresDatabase


class PgKeyValue:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    async def get(self, key: str, default: str | None = None) -> str | None:
        value = await self._db.fetchval("SELECT value FROM kv WHERE key = $1", key)
        return str(value) if value is not None else default

    async def set(self, key: str, value: str, *, keep_for: timedelta | None = None) -> None:
        expires = (utcnow() + keep_for).isoformat() if keep_for is not None else None
        await self._db.execute(
            "INSERT INTO kv (key, value, expires_at) VALUES ($1, $2, $3)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value,"
            " expires_at = excluded.expires_at",
            key,
            value,
            expires,
        )

    async def delete(self, key: str) -> None:
        await self._db.execute("DELETE FROM kv WHERE key = $1", key)

    async def prune(self, now: datetime) -> int:
        return await self._db.execute(
            "DELETE FROM kv WHERE expires_at IS NOT NULL AND expires_at <= $1", now.isoformat()
        )
