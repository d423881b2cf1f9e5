"""The outbox: every reply, reminder and notice is persisted before it is sent.

A delivery key makes sending idempotent (a reminder occurrence re-fired after a restart
is not sent twice); failed sends are retried with backoff until the channel accepts.
Delivery claims rows (pending -> sending, under its run id) as it takes them from the
bus, a burst in one transaction, and holds the claim through retries: a row queued twice
(start-up resume and a reminder's catch-up fire) is sent once; a row a dead run left in
``sending`` is taken over by the next run.
"""

from __future__ import annotations

import functools
import sqlite3
from datetime import datetime, timedelta

from bot.messages import OutboundMessage, outbound_from_json, to_json, utcnow
from bot.store.db import Database

BACKOFF_BASE_S = 1.0
BACKOFF_MAX_S = 300.0


_UNSENT = "status IN ('pending', 'sending')"  # still to deliver: queued or being sent


def backoff(attempts: int) -> timedelta:
    return timedelta(seconds=min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2 ** max(0, attempts - 1)))


_ADD = (
    "INSERT OR IGNORE INTO outbox (delivery_key, channel, payload, next_attempt_at,"
    " created_at) VALUES (?, ?, ?, ?, ?)"
)


def _add(conn: sqlite3.Connection, row: tuple[str, ...]) -> bool:
    return conn.execute(_ADD, row).rowcount > 0


def _mark_sent(conn: sqlite3.Connection, rows: list[tuple[str, str]]) -> None:
    conn.executemany(
        "UPDATE outbox SET status = 'sent', sent_at = ?, attempts = attempts + 1,"
        " last_error = NULL WHERE delivery_key = ?",
        rows,
    )


class OutboxStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, msg: OutboundMessage) -> bool:
        """Persist a message to deliver; False when its delivery key is already known."""
        now = utcnow().isoformat()
        row = (msg.delivery_key, msg.key.channel, to_json(msg), now, now)
        return await self._db.run_together(functools.partial(_add, row=row))

    async def add_many(self, msgs: list[OutboundMessage]) -> list[OutboundMessage]:
        """Persist a batch in one transaction; returns the ones whose key was new."""
        seen: set[str] = set()
        for start in range(0, len(msgs), 500):
            chunk = [m.delivery_key for m in msgs[start : start + 500]]
            marks = ",".join("?" * len(chunk))
            rows = await self._db.fetchall(
                f"SELECT delivery_key FROM outbox WHERE delivery_key IN ({marks})", chunk
            )
            seen.update(r["delivery_key"] for r in rows)
        new: list[OutboundMessage] = []
        for msg in msgs:
            if msg.delivery_key not in seen:
                seen.add(msg.delivery_key)
                new.append(msg)
        now = utcnow().isoformat()
        await self._db.executemany(
            _ADD,
            [(m.delivery_key, m.key.channel, to_json(m), now, now) for m in new],
        )
        return new

    async def claim(self, msgs: list[OutboundMessage], claimant: str) -> list[OutboundMessage]:
        """Take rows for sending, in one transaction; returns the messages taken (the
        first copy of each key). Not taken: sent, given up, or already held by
        ``claimant`` (a delivery run's id), which keeps its claim through retries. A
        claim by another run is stale: one daemon owns a database, so that run died."""
        by_key: dict[str, OutboundMessage] = {}
        for msg in msgs:
            by_key.setdefault(msg.delivery_key, msg)
        keys = list(by_key)

        def work(c: sqlite3.Connection) -> set[str]:
            taken: set[str] = set()
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                sql = (
                    "UPDATE outbox SET status = 'sending', claimed_by = ? WHERE delivery_key"
                    f" IN ({','.join('?' * len(chunk))}) AND (status = 'pending' OR"
                    " (status = 'sending' AND claimed_by IS NOT ?)) RETURNING delivery_key"
                )
                taken.update(row[0] for row in c.execute(sql, (claimant, *chunk, claimant)))
            return taken

        # One transaction, shared with other chats' small pieces (Database.run_together).
        taken = await self._db.run_together(work)
        return [msg for key, msg in by_key.items() if key in taken]

    async def in_doubt(self, claimant: str) -> dict[str, datetime]:
        """Rows another run was sending when it died: delivery key -> when queued. Each
        may or may not have reached the platform (the run died between the post and
        its sent mark); a channel that can look a post up does so before posting again."""
        rows = await self._db.fetchall(
            "SELECT delivery_key, created_at FROM outbox WHERE status = 'sending'"
            " AND claimed_by IS NOT ?",
            (claimant,),
        )
        return {str(r["delivery_key"]): datetime.fromisoformat(r["created_at"]) for r in rows}

    async def mark_sent(self, msg: OutboundMessage) -> None:
        await self.mark_sent_keys([msg.delivery_key])

    async def mark_sent_keys(self, keys: list[str]) -> None:
        now = utcnow().isoformat()
        rows = [(now, key) for key in keys]
        await self._db.run_together(functools.partial(_mark_sent, rows=rows))

    async def give_up(self, msg: OutboundMessage, error: str) -> None:
        await self._db.execute(
            "UPDATE outbox SET status = 'failed', last_error = ? WHERE delivery_key = ?",
            (error[:500], msg.delivery_key),
        )

    async def mark_failed(self, msg: OutboundMessage, error: str) -> tuple[int, datetime]:
        """Record a failed attempt; returns the attempts so far and when the next is due."""
        row = await self._db.fetchone(
            "SELECT attempts FROM outbox WHERE delivery_key = ?", (msg.delivery_key,)
        )
        attempts = (int(row["attempts"]) if row else 0) + 1
        due = utcnow() + backoff(attempts)
        await self._db.execute(
            "UPDATE outbox SET attempts = ?, last_error = ?, next_attempt_at = ?"
            " WHERE delivery_key = ?",
            (attempts, error[:500], due.isoformat(), msg.delivery_key),
        )
        return attempts, due

    async def due(
        self, now: datetime | None = None, *, pending_all: bool = False
    ) -> list[OutboundMessage]:
        """Pending messages whose next attempt is due (or all pending), oldest first."""
        if pending_all:
            rows = await self._db.fetchall(
                f"SELECT payload FROM outbox WHERE {_UNSENT} ORDER BY id"
            )
        else:
            rows = await self._db.fetchall(
                f"SELECT payload FROM outbox WHERE {_UNSENT} AND next_attempt_at <= ? ORDER BY id",
                ((now or utcnow()).isoformat(),),
            )
        return [outbound_from_json(r["payload"]) for r in rows]

    async def next_due(self) -> datetime | None:
        row = await self._db.fetchone(
            f"SELECT MIN(next_attempt_at) AS t FROM outbox WHERE {_UNSENT}"
        )
        return datetime.fromisoformat(row["t"]) if row and row["t"] else None

    async def depth(self) -> int:
        row = await self._db.fetchone(f"SELECT COUNT(*) AS n FROM outbox WHERE {_UNSENT}")
        return int(row["n"]) if row else 0

    async def prune(self, older_than: datetime) -> int:
        """Forget sent and abandoned deliveries; pending ones are never dropped."""
        return await self._db.execute_count(
            f"DELETE FROM outbox WHERE NOT {_UNSENT} AND created_at < ?",
            (older_than.isoformat(),),
        )
