"""The outbox on PostgreSQL (see :mod:`bot.store.outbox` for what it promises)."""

from __future__ import annotations

from datetime import datetime

from bot.messages import OutboundMessage, outbound_from_json, to_json, utcnow
from bot.store.outbox import backoff
from bot.store.postgres.database import PostgresDatabase
from bot.store.postgres.statements import FENCE

_UNSENT = "status IN ('pending', 'sending')"  # still to deliver: queued or being sent
_ADD = (  # a turn's reply: refused with the turn once its chat's lease moved on
    "INSERT INTO outbox (delivery_key, channel, payload, next_attempt_at, created_at)"
    f" SELECT $1, $2, $3, $4, $4 WHERE {FENCE} ON CONFLICT DO NOTHING"
)


class PgOutbox:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    async def add(self, msg: OutboundMessage) -> bool:
        now = utcnow().isoformat()
        return (
            await self._db.execute(_ADD, msg.delivery_key, msg.key.channel, to_json(msg), now) > 0
        )

    async def add_many(self, msgs: list[OutboundMessage]) -> list[OutboundMessage]:
        """Persist a batch in one statement; returns the ones whose key was new (the
        first copy of a key the batch repeats)."""
        if not msgs:
            return []
        now = utcnow().isoformat()
        rows = await self._db.fetch(
            "INSERT INTO outbox (delivery_key, channel, payload, next_attempt_at, created_at)"
            " SELECT k, c, p, $4, $4 FROM unnest($1::text[], $2::text[], $3::text[])"
            f" AS batch(k, c, p) WHERE {FENCE} ON CONFLICT DO NOTHING RETURNING delivery_key",
            [m.delivery_key for m in msgs],
            [m.key.channel for m in msgs],
            [to_json(m) for m in msgs],
            now,
        )
        added = {str(r["delivery_key"]) for r in rows}
        new: list[OutboundMessage] = []
        for msg in msgs:
            if msg.delivery_key in added:
                added.discard(msg.delivery_key)
                new.append(msg)
        return new

    async def claim(self, msgs: list[OutboundMessage], claimant: str) -> list[OutboundMessage]:
        """Take rows for sending (see :meth:`bot.store.outbox.OutboxStore.claim`)."""
        by_key: dict[str, OutboundMessage] = {}
        for msg in msgs:
            by_key.setdefault(msg.delivery_key, msg)
        # Among replicas, a write under the chat partition's fence (refused once it moved).
        rows = await self._db.fetch(
            "UPDATE outbox SET status = 'sending', claimed_by = $1"
            " WHERE delivery_key = ANY($2::text[]) AND (status = 'pending'"
            " OR (status = 'sending' AND claimed_by IS DISTINCT FROM $1))"
            f" AND {FENCE} RETURNING delivery_key",
            claimant,
            list(by_key),
        )
        taken = {str(r["delivery_key"]) for r in rows}
        return [msg for key, msg in by_key.items() if key in taken]

    async def in_doubt(self, claimant: str) -> dict[str, datetime]:
        rows = await self._db.fetch(
            "SELECT delivery_key, created_at FROM outbox WHERE status = 'sending'"
            " AND claimed_by IS DISTINCT FROM $1",
            claimant,
        )
        return {str(r["delivery_key"]): datetime.fromisoformat(r["created_at"]) for r in rows}

    async def mark_sent(self, msg: OutboundMessage) -> None:
        await self.mark_sent_keys([msg.delivery_key])

    async def mark_sent_keys(self, keys: list[str]) -> None:
        await self._db.execute(
            "UPDATE outbox SET status = 'sent', sent_at = $1, attempts = attempts + 1,"
            " last_error = NULL WHERE delivery_key = ANY($2::text[])",
            utcnow().isoformat(),
            keys,
        )

    async def give_up(self, msg: OutboundMessage, error: str) -> None:
        await self._db.execute(
            "UPDATE outbox SET status = 'failed', last_error = $1 WHERE delivery_key = $2",
            error[:500],
            msg.delivery_key,
        )

    async def mark_failed(self, msg: OutboundMessage, error: str) -> tuple[int, datetime]:
        """Record a failed attempt; returns the attempts so far and when the next is due."""
        async with self._db.transaction() as conn:
            found = await conn.fetchval(
                "SELECT attempts FROM outbox WHERE delivery_key = $1 FOR UPDATE",
                msg.delivery_key,
            )
            attempts = (int(found) if found is not None else 0) + 1
            due = utcnow() + backoff(attempts)
            await conn.execute(
                "UPDATE outbox SET attempts = $1, last_error = $2, next_attempt_at = $3"
                " WHERE delivery_key = $4",
                attempts,
                error[:500],
                due.isoformat(),
                msg.delivery_key,
            )
        return attempts, due

    async def due(
        self, now: datetime | None = None, *, pending_all: bool = False
    ) -> list[OutboundMessage]:
        if pending_all:
            rows = await self._db.fetch(f"SELECT payload FROM outbox WHERE {_UNSENT} ORDER BY id")
        else:
            rows = await self._db.fetch(
                f"SELECT payload FROM outbox WHERE {_UNSENT} AND next_attempt_at <= $1 ORDER BY id",
                (now or utcnow()).isoformat(),
            )
        return [outbound_from_json(r["payload"]) for r in rows]

    async def next_due(self) -> datetime | None:
        found = await self._db.fetchval(f"SELECT MIN(next_attempt_at) FROM outbox WHERE {_UNSENT}")
        return datetime.fromisoformat(found) if found else None

    async def depth(self) -> int:
        return int(await self._db.fetchval(f"SELECT COUNT(*) FROM outbox WHERE {_UNSENT}"))

    async def prune(self, older_than: datetime) -> int:
        return await self._db.execute(
            f"DELETE FROM outbox WHERE NOT {_UNSENT} AND created_at < $1",
            older_than.isoformat(),
        )
