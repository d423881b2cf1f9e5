"""The durable inbox on PostgreSQL (see :mod:`bot.store.inbox` for what it promises).

Each journal write is its own committed statement, flushed before it returns
(``DURABLE``: the store's other commits do not wait for the flush), so the channel may
acknowledge after it. The writes carry their fence check in the statement (``FENCE``).
A turn's start, counted right before the turn, reads what the turn will read of the
other tables too (:mod:`.turnreads`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from datetime import datetime
from typing import Any

from bot.messages import InboundMessage, inbound_from_json, to_json, utcnow
from bot.store.inbox import row_key
from bot.store.memory import COLUMNS, Scope, chat_owner, fact_of, user_owner
from bot.store.postgres.database import PostgresDatabase, Record
from bot.store.postgres.statements import DURABLE, FENCE
from bot.store.previews import PreviewRecord, turn_of

_ROW = "channel = $1 AND chat_id = $2 AND thread_id = $3 AND message_id = $4"
# A turn's start counted, with what the turn reads next (bot/store/postgres/turnreads.py):
# the user's time zone, a preview an earlier run of it left, and the facts of the user
# ($9: those that follow them or stay in this chat) and the chat ($11) in the workspace
# the chat last read them in ($7; NULL: none).
_STARTED = f"""
WITH bumped AS (
    UPDATE inbox SET attempts = attempts + 1 WHERE {_ROW} AND {FENCE} RETURNING attempts
)
SELECT (SELECT attempts FROM bumped) AS attempts,
    (SELECT timezone FROM user_settings WHERE channel = $1 AND user_id = $5) AS timezone,
    p.message_id AS preview, p.final, {", ".join(f"f.{c}" for c in COLUMNS.split(", "))}
FROM (SELECT 1) AS one
LEFT JOIN previews p ON p.turn = $6
LEFT JOIN LATERAL (
    SELECT {COLUMNS} FROM memory_facts WHERE workspace = $7
    AND ((scope = $8 AND owner = $9 AND chat IN ('', $11)) OR (scope = $10 AND owner = $11))
    ORDER BY id
) f ON TRUE
"""


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
        reads = self._db.reads
        user, chat = user_owner(msg.key.channel, msg.user_id), chat_owner(msg.key)
        workspace = reads.workspace(chat)
        rows = await self._db.fetch(
            _STARTED,
            *row_key(msg),
            msg.user_id,
            turn_of(msg),
            workspace,
            Scope.USER.value,
            user,
            Scope.CHAT.value,
            chat,
        )
        reads.keep(_read_ahead(msg, rows, workspace, user, chat))
        found = rows[0]["attempts"]
        return int(found) if found is not None else 1  # not journaled: a first try

    async def interrupted(self, msgs: Sequence[InboundMessage]) -> None:
        await self._db.executemany(
            f"UPDATE inbox SET attempts = attempts - 1 WHERE {_ROW} AND attempts > 0",
            [row_key(m) for m in msgs],
        )

    async def _finish(self, msg: InboundMessage, status: str) -> None:
        self._db.reads.end()
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

    async def pending_ids(self) -> list[int]:
        rows = await self._db.fetch("SELECT id FROM inbox WHERE status = 'pending' ORDER BY id")
        return [int(r["id"]) for r in rows]

    async def read_pending(self, ids: Sequence[int]) -> list[tuple[int, InboundMessage]]:
        rows = await self._db.fetch(
            "SELECT id, payload FROM inbox WHERE status = 'pending' AND id = ANY($1::bigint[])"
            " ORDER BY id",
            list(ids),
        )
        return [(int(r["id"]), inbound_from_json(r["payload"])) for r in rows]

    async def prune(self, older_than: datetime) -> int:
        return await self._db.execute(
            "DELETE FROM inbox WHERE status != 'pending' AND COALESCE(done_at, received_at) < $1",
            older_than.isoformat(),
        )


def _read_ahead(
    msg: InboundMessage, rows: Sequence[Record], workspace: str | None, user: str, chat: str
) -> dict[Hashable, Any]:
    """What :data:`_STARTED` read, by the key each reader looks it up under."""
    first = rows[0]
    preview = first["preview"]
    values: dict[Hashable, Any] = {
        ("timezone", msg.key.channel, msg.user_id): first["timezone"],
        ("preview", turn_of(msg)): (
            PreviewRecord(str(preview), bool(first["final"])) if preview is not None else None
        ),
    }
    if workspace is not None:
        facts = [fact_of(r) for r in rows if r["id"] is not None]
        values[("facts", workspace, user, chat)] = facts
    return values
