"""Streamed previews' message ids on PostgreSQL (see :mod:`bot.store.previews`)."""

from __future__ import annotations

from datetime import datetime

from bot.messages import ChatKey, utcnow
from bot.store.postgres.database import PostgresDatabase
from bot.store.postgres.statements import FENCE
from bot.store.previews import PreviewRecord


class PgPreviews:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    async def save(self, turn: str, key: ChatKey, message_id: str) -> None:
        self._db.reads.drop("preview")
        await self._db.execute(
            "INSERT INTO previews (turn, channel, chat_id, message_id, final, created_at)"
            f" SELECT $1, $2, $3, $4, 0, $5 WHERE {FENCE} ON CONFLICT (turn) DO UPDATE SET"
            " message_id = excluded.message_id, final = 0",
            turn,
            key.channel,
            key.chat_id,
            message_id,
            utcnow().isoformat(),
        )

    async def get(self, turn: str) -> PreviewRecord | None:
        known, record = self._db.reads.get(("preview", turn))
        if known:  # read by the turn's start (bot/store/postgres/turnreads.py)
            return record  # type: ignore[no-any-return]
        row = await self._db.fetchrow(
            "SELECT message_id, final FROM previews WHERE turn = $1", turn
        )
        return PreviewRecord(str(row["message_id"]), bool(row["final"])) if row else None

    async def finalize(self, turn: str) -> None:
        self._db.reads.drop("preview")
        await self._db.execute(f"UPDATE previews SET final = 1 WHERE turn = $1 AND {FENCE}", turn)

    async def prune(self, older_than: datetime) -> int:
        return await self._db.execute(
            "DELETE FROM previews WHERE created_at < $1", older_than.isoformat()
        )
