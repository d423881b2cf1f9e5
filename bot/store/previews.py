"""Streamed previews' message ids, durable before their first edit (see bot/streaming)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.messages import ChatKey, InboundMessage, utcnow
from bot.store.db import Database


def turn_of(msg: InboundMessage) -> str:
    """The key a turn's preview is stored under: the message it answers."""
    return f"{msg.key}:{msg.message_id}"


@dataclass(frozen=True, slots=True)
class PreviewRecord:
    """The preview message of one turn: its platform id, and whether the final answer
    (which replaces it in place) is already on its way."""

    message_id: str
    final: bool = False


class PreviewStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def save(self, turn: str, key: ChatKey, message_id: str) -> None:
        """Record the preview of ``turn`` (a later save of the same turn replaces it)."""
        await self._db.execute(
            "INSERT INTO previews (turn, channel, chat_id, message_id, final, created_at)"
            " VALUES (?, ?, ?, ?, 0, ?) ON CONFLICT (turn) DO UPDATE SET"
            " message_id = excluded.message_id, final = 0",
            (turn, key.channel, key.chat_id, message_id, utcnow().isoformat()),
        )

    async def get(self, turn: str) -> PreviewRecord | None:
        row = await self._db.fetchone(
            "SELECT message_id, final FROM previews WHERE turn = ?", (turn,)
        )
        if row is None:
            return None
        return PreviewRecord(str(row["message_id"]), bool(row["final"]))

    async def finalize(self, turn: str) -> None:
        """The final answer is being queued: no more preview edits for ``turn``."""
        await self._db.execute("UPDATE previews SET final = 1 WHERE turn = ?", (turn,))

    async def prune(self, older_than: datetime) -> int:
        return await self._db.execute_count(
            "DELETE FROM previews WHERE created_at < ?", (older_than.isoformat(),)
        )
