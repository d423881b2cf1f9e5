"""The durable inbox on PostgreSQL (see :mod:`bot.store.inbox` for what it promises).

Each journal write is its own committed statement, flushed before it returns
(``DURABLE``: the store's other commits do not wait for the flush), so the channel may
acknowledge after it. The writes carry their fence check in the statement (``FENCE``).
"""

from __future__ import annotations

from datetime import datetime

from bot.messages import InboundMessage, inbound_from_json, to_json, utcnow
from bot.store.inbox import row_key
from bot.store.postgres.database import PostgresDatabase
from bot.store.postgres.statements import DURABLE, FENCE

_ROW = "channel = $1 AND chat_id = $2 AND thread_id = $3 AND message_id = $4"


class PgInbox:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    async def accept(self, msg: InboundMessage) -> bool:
        """Journal a message; False when the same (chat, message id) was seen before."""
        return (
            await self._db.execute(
                "INSERT INTO inbox (channel, chat_id, thread_id, message_id, payload,"
                f" received_at) SELECT $1, $2, $3, $4, $5, $6 WHERE {DURABLE} AND {FENCE}"
                " ON CONFLICT DO NOTHING",
                *row_key(msg),
                to_json(msg),
                msg.received_at.isoformat(),
            )
            > 0
        )

    async def done(self, msg: InboundMessage) -> None:
        await self._finish(msg, "done")

    async def failed(self, msg: InboundMessage) -> None:
        await self._finish(msg, "failed")

    async def started(self, msg: InboundMessage) -> int:
        found = await self._db.fetchval(
            f"UPDATE inbox SET attempts = attempts + 1 WHERE {_ROW} AND {FENCE} RETURNING attempts",
            *row_key(msg),
        )
        return int(found) if found is not None else 1  # not journaled: a first try

    async def interrupted(self, msg: InboundMessage) -> None:
        await self._db.execute(
            f"UPDATE inbox SET attempts = attempts - 1 WHERE {_ROW} AND attempts > 0",
            *row_key(msg),
        )

    async def _finish(self, msg: InboundMessage, status: str) -> None:
        await self._db.execute(
            f"UPDATE inbox SET status = $5, done_at = $6 WHERE {_ROW} AND {FENCE}",
            *row_key(msg),
            status,
            utcnow().isoformat(),
        )

    async def pending(self) -> list[InboundMessage]:
        rows = await self._db.fetch(
            "SELECT payload FROM inbox WHERE status = 'pending' ORDER BY id"
        )
        return [inbound_from_json(r["payload"]) for r in rows]

    async def prune(self, older_than: datetime) -> int:
        return await self._db.execute(
            "DELETE FROM inbox WHERE status != 'pending' AND COALESCE(done_at, received_at) < $1",
            older_than.isoformat(),
        )
