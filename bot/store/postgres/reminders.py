"""Reminders and user settings on PostgreSQL (see :mod:`bot.store.reminders`)."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from bot.errors import ChatQuotaExceeded, QuotaExceeded
from bot.messages import ChatKey, utcnow
from bot.store.postgres.database import PostgresDatabase
from bot.store.reminders import (
    COLUMNS,
    Reminder,
    ReminderKind,
    ReminderStatus,
    fired_rows,
    reminder_of,
)

_INSERT = (
    "INSERT INTO reminders (channel, chat_id, thread_id, user_id, content, kind,"
    " next_fire_at, recurrence, timezone, created_at, source, workspace, chain_depth)"
    f" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING {COLUMNS}"
)
_ACTIVE = f"SELECT {COLUMNS} FROM reminders WHERE status = 'active'"


async def _active(
    conn: asyncpg.Connection, lock: str, column: str, channel: str, value: str
) -> int:
    """The active reminders of ``channel`` whose ``column`` is ``value``, counted under
    the advisory lock ``lock`` (held to the transaction's end: a concurrent add waits)."""
    await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", lock)
    found = await conn.fetchval(
        f"SELECT COUNT(*) FROM reminders WHERE status = 'active' AND channel = $1"
        f" AND {column} = $2",
        channel,
        value,
    )
    return int(found)


class PgReminders:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    async def add(
        self,
        key: ChatKey,
        user_id: str,
        *,
        content: str,
        kind: ReminderKind,
        fire_at: datetime,
        recurrence: str | None,
        timezone: str,
        source: str | None = None,
        workspace: str = "default",
        max_active: int | None = None,
        chain_depth: int = 0,
        max_active_in_chat: int | None = None,
    ) -> Reminder:
        """Store a reminder; with ``max_active``, only while the user has fewer active
        ones, counted under a lock on that user (concurrent adds cannot pass the limit);
        with ``max_active_in_chat``, only while the chat has, under a lock on the chat
        (taken after the user's: never the other way round, so never a deadlock)."""
        row = (
            key.channel,
            key.chat_id,
            key.thread_id or "",
            user_id,
            content,
            kind.value,
            fire_at.isoformat(),
            recurrence,
            timezone,
            utcnow().isoformat(),
            source,
            workspace,
            chain_depth,
        )
        async with self._db.transaction() as conn:
            if max_active is not None:
                lock = f"reminders:{key.channel}:{user_id}"
                if await _active(conn, lock, "user_id", key.channel, user_id) >= max_active:
                    raise QuotaExceeded(f"{max_active} active reminders is the most allowed")
            if max_active_in_chat is not None:
                lock = f"reminders-chat:{key.channel}:{key.chat_id}"
                if await _active(conn, lock, "chat_id", key.channel, key.chat_id) >= (
                    max_active_in_chat
                ):
                    raise ChatQuotaExceeded(
                        f"{max_active_in_chat} active reminders in a chat is the most allowed"
                    )
            made = await conn.fetchrow(_INSERT, *row)
        return reminder_of(made)

    async def get(self, reminder_id: int) -> Reminder | None:
        row = await self._db.fetchrow(f"SELECT {COLUMNS} FROM reminders WHERE id = $1", reminder_id)
        return reminder_of(row) if row else None

    async def by_source(self, source: str) -> Reminder | None:
        row = await self._db.fetchrow(f"SELECT {COLUMNS} FROM reminders WHERE source = $1", source)
        return reminder_of(row) if row else None

    async def due_times(self, until: datetime) -> list[datetime]:
        rows = await self._db.fetch(
            "SELECT DISTINCT next_fire_at FROM reminders WHERE status = 'active'"
            " AND next_fire_at <= $1 ORDER BY next_fire_at",
            until.isoformat(),
        )
        return [datetime.fromisoformat(r["next_fire_at"]) for r in rows]

    async def due(self, until: datetime) -> list[Reminder]:
        rows = await self._db.fetch(
            f"{_ACTIVE} AND next_fire_at <= $1 ORDER BY next_fire_at, id", until.isoformat()
        )
        return [reminder_of(r) for r in rows]

    async def count_active(self) -> int:
        return int(
            await self._db.fetchval("SELECT COUNT(*) FROM reminders WHERE status = 'active'")
        )

    async def active(self) -> list[Reminder]:
        rows = await self._db.fetch(f"{_ACTIVE} ORDER BY next_fire_at, id")
        return [reminder_of(r) for r in rows]

    async def active_page(self, limit: int, offset: int = 0) -> list[Reminder]:
        rows = await self._db.fetch(
            f"{_ACTIVE} ORDER BY channel, user_id, chat_id, next_fire_at, id LIMIT $1 OFFSET $2",
            limit,
            offset,
        )
        return [reminder_of(r) for r in rows]

    async def active_for_user(
        self, channel: str, user_id: str, workspace: str | None = None
    ) -> list[Reminder]:
        rows = await self._db.fetch(
            f"{_ACTIVE} AND channel = $1 AND user_id = $2"
            " AND ($3::text IS NULL OR workspace = $3) ORDER BY next_fire_at, id",
            channel,
            user_id,
            workspace,
        )
        return [reminder_of(r) for r in rows]

    async def active_in_chat(self, channel: str, chat_id: str) -> list[Reminder]:
        rows = await self._db.fetch(
            f"{_ACTIVE} AND channel = $1 AND chat_id = $2 ORDER BY next_fire_at, id",
            channel,
            chat_id,
        )
        return [reminder_of(r) for r in rows]

    async def count_active_for_user(self, channel: str, user_id: str) -> int:
        found = await self._db.fetchval(
            "SELECT COUNT(*) FROM reminders WHERE status = 'active' AND channel = $1"
            " AND user_id = $2",
            channel,
            user_id,
        )
        return int(found)

    async def fired_many(self, entries: list[tuple[int, datetime, datetime | None, bool]]) -> None:
        # Only rows still active move on: one cancelled while it fired stays cancelled.
        await self._db.executemany(
            "UPDATE reminders SET last_fired_at = $1, next_fire_at = $2, status = $3,"
            " attempts = attempts + 1 WHERE id = $4 AND status = 'active'",
            fired_rows(entries),
        )

    async def to_replan(self) -> list[Reminder]:
        rows = await self._db.fetch(
            f"SELECT {COLUMNS} FROM reminder_replans JOIN reminders ON id = reminder_id"
            " WHERE status = 'active' ORDER BY id"  # from the list: usually empty
        )
        return [reminder_of(r) for r in rows]

    async def replanned(self) -> None:
        await self._db.execute("DELETE FROM reminder_replans")

    async def moved_many(self, entries: list[tuple[int, datetime, datetime]]) -> int:
        moved = 0  # see ReminderStore.moved_many
        for reminder_id, was, new in entries:
            moved += await self._db.execute(
                "UPDATE reminders SET next_fire_at = $1"
                " WHERE id = $2 AND status = 'active' AND next_fire_at = $3",
                new.isoformat(),
                reminder_id,
                was.isoformat(),
            )
        return moved

    async def rezoned_many(self, entries: list[tuple[int, datetime, str, datetime]]) -> int:
        moved = 0  # see ReminderStore.rezoned_many
        for reminder_id, was, tz, new in entries:
            moved += await self._db.execute(
                "UPDATE reminders SET timezone = $1, next_fire_at = $2"
                " WHERE id = $3 AND status = 'active' AND next_fire_at = $4",
                tz,
                new.isoformat(),
                reminder_id,
                was.isoformat(),
            )
        return moved

    async def fired(
        self,
        reminder_id: int,
        fired_at: datetime,
        next_fire_at: datetime | None,
        *,
        missed: bool = False,
    ) -> None:
        await self.fired_many([(reminder_id, fired_at, next_fire_at, missed)])

    async def set_status(self, reminder_id: int, status: ReminderStatus) -> None:
        await self._db.execute(
            "UPDATE reminders SET status = $1 WHERE id = $2", status.value, reminder_id
        )

    async def cancel_in_chat(self, channel: str, chat_id: str, thread_id: str | None) -> int:
        return await self._db.execute(  # see ReminderStore.cancel_in_chat
            "UPDATE reminders SET status = 'cancelled' WHERE status = 'active'"
            " AND channel = $1 AND chat_id = $2 AND ($3::text IS NULL OR thread_id = $3)",
            channel,
            chat_id,
            thread_id,
        )

    async def move_chat(self, channel: str, chat_id: str, new_chat_id: str) -> int:
        return await self._db.execute(  # see ReminderStore.move_chat
            "UPDATE reminders SET chat_id = $1 WHERE status = 'active'"
            " AND channel = $2 AND chat_id = $3",
            new_chat_id,
            channel,
            chat_id,
        )

    async def prune(self, older_than: datetime) -> int:
        return await self._db.execute(
            "DELETE FROM reminders WHERE status != 'active'"
            " AND COALESCE(last_fired_at, created_at) < $1",
            older_than.isoformat(),
        )


class PgUserSettings:
    """Per-user preferences, read from the database each time (another replica may
    have set them)."""

    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    async def timezone(self, channel: str, user_id: str) -> str | None:
        known, found = self._db.reads.get(("timezone", channel, user_id))
        if not known:  # else read by the turn's start (bot/store/postgres/turnreads.py)
            found = await self._db.fetchval(
                "SELECT timezone FROM user_settings WHERE channel = $1 AND user_id = $2",
                channel,
                user_id,
            )
        return str(found) if found else None

    async def set_timezone(self, channel: str, user_id: str, tz: str) -> None:
        self._db.reads.drop("timezone")
        await self._db.execute(
            "INSERT INTO user_settings (channel, user_id, timezone) VALUES ($1, $2, $3)"
            " ON CONFLICT (channel, user_id) DO UPDATE SET timezone = excluded.timezone",
            channel,
            user_id,
            tz,
        )
