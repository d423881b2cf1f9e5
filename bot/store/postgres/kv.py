"""The key-value table on PostgreSQL (adapter state: polling offsets and the like)."""

from __future__ import annotations

from bot.store.postgres.database import PostgresDatabase


class PgKeyValue:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    async def get(self, key: str, default: str | None = None) -> str | None:
        value = await self._db.fetchval("SELECT value FROM kv WHERE key = $1", key)
        return str(value) if value is not None else default

    async def set(self, key: str, value: str) -> None:
        await self._db.execute(
            "INSERT INTO kv (key, value) VALUES ($1, $2)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            key,
            value,
        )

    async def delete(self, key: str) -> None:
        await self._db.execute("DELETE FROM kv WHERE key = $1", key)
