"""Reminders and follow-ups: SQLite is the source of truth, the scheduler only a timer.

Times are stored as ISO 8601 UTC; the user's zone is stored with each reminder so a
recurring one keeps its local wall-clock time across DST changes.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from bot.errors import ChatQuotaExceeded, QuotaExceeded
from bot.lru import LRU
from bot.messages import ChatKey, utcnow
from bot.store.db import Database
from bot.store.rows import Row


class ReminderKind(StrEnum):
    REMINDER = "reminder"
    FOLLOWUP = "followup"


class ReminderStatus(StrEnum):
    ACTIVE = "active"
    DONE = "done"
    CANCELLED = "cancelled"
    MISSED = "missed"


@dataclass(frozen=True, slots=True)
class Reminder:
    id: int
    key: ChatKey
    user_id: str
    content: str
    kind: ReminderKind
    next_fire_at: datetime | None
    recurrence: str | None
    timezone: str
    status: ReminderStatus
    created_at: datetime
    last_fired_at: datetime | None
    attempts: int
    workspace: str = "default"
    # Follow-up turns that led to it: 0 when a person's message set it (see
    # ReminderService's MAX_FOLLOWUP_CHAIN).
    chain_depth: int = 0


COLUMNS = (
    "id, channel, chat_id, thread_id, user_id, content, kind, next_fire_at, recurrence,"
    " timezone, status, created_at, last_fired_at, attempts, workspace, chain_depth"
)


def _dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def reminder_of(row: Row) -> Reminder:
    return Reminder(
        id=int(row["id"]),
        key=ChatKey(row["channel"], row["chat_id"], row["thread_id"] or None),
        user_id=row["user_id"],
        content=row["content"],
        kind=ReminderKind(row["kind"]),
        next_fire_at=_dt(row["next_fire_at"]),
        recurrence=row["recurrence"],
        timezone=row["timezone"],
        status=ReminderStatus(row["status"]),
        created_at=datetime.fromisoformat(row["created_at"]),
        last_fired_at=_dt(row["last_fired_at"]),
        attempts=int(row["attempts"]),
        workspace=row["workspace"],
        chain_depth=int(row["chain_depth"]),
    )


def fired_rows(
    entries: list[tuple[int, datetime, datetime | None, bool]],
) -> list[tuple[str, str | None, str, int]]:
    """(last fired, next fire, status, id) per firing: the next occurrence, else done (or
    missed when it was never delivered)."""
    rows = []
    for reminder_id, fired_at, nxt, missed in entries:
        status = ReminderStatus.ACTIVE if nxt else ReminderStatus.DONE
        if missed and nxt is None:
            status = ReminderStatus.MISSED
        rows.append(
            (fired_at.isoformat(), nxt.isoformat() if nxt else None, status.value, reminder_id)
        )
    return rows


_INSERT = (
    "INSERT INTO reminders (channel, chat_id, thread_id, user_id, content, kind,"
    " next_fire_at, recurrence, timezone, created_at, source, workspace, chain_depth)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
)


class ReminderStore:
    def __init__(self, db: Database) -> None:
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
        """Store a reminder; with ``max_active``, only if the user has fewer active ones,
        with ``max_active_in_chat``, only if the chat (any thread of it) has, counted in
        the same transaction (concurrent adds cannot pass the limit)."""
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

        def work(c: sqlite3.Connection) -> int:
            if max_active is not None:
                (active,) = c.execute(
                    "SELECT COUNT(*) FROM reminders WHERE status = 'active'"
                    " AND channel = ? AND user_id = ?",
                    (key.channel, user_id),
                ).fetchone()
                if int(active) >= max_active:
                    raise QuotaExceeded(f"{max_active} active reminders is the most allowed")
            if max_active_in_chat is not None:
                (in_chat,) = c.execute(
                    "SELECT COUNT(*) FROM reminders WHERE status = 'active'"
                    " AND channel = ? AND chat_id = ?",
                    (key.channel, key.chat_id),
                ).fetchone()
                if int(in_chat) >= max_active_in_chat:
                    raise ChatQuotaExceeded(
                        f"{max_active_in_chat} active reminders in a chat is the most allowed"
                    )
            return int(c.execute(_INSERT, row).lastrowid or 0)

        rowid = await self._db.run_in_transaction(work)
        found = await self.get(rowid)
        assert found is not None
        return found

    async def get(self, reminder_id: int) -> Reminder | None:
        row = await self._db.fetchone(
            f"SELECT {COLUMNS} FROM reminders WHERE id = ?", (reminder_id,)
        )
        return reminder_of(row) if row else None

    async def by_source(self, source: str) -> Reminder | None:
        row = await self._db.fetchone(
            f"SELECT {COLUMNS} FROM reminders WHERE source = ?", (source,)
        )
        return reminder_of(row) if row else None

    async def due_times(self, until: datetime) -> list[datetime]:
        """Distinct fire times of active reminders up to ``until`` (overdue ones included)."""
        rows = await self._db.fetchall(
            "SELECT DISTINCT next_fire_at FROM reminders WHERE status = 'active'"
            " AND next_fire_at <= ? ORDER BY next_fire_at",
            (until.isoformat(),),
        )
        return [datetime.fromisoformat(r["next_fire_at"]) for r in rows]

    async def due(self, until: datetime) -> list[Reminder]:
        rows = await self._db.fetchall(
            f"SELECT {COLUMNS} FROM reminders WHERE status = 'active' AND next_fire_at <= ?"
            " ORDER BY next_fire_at, id",
            (until.isoformat(),),
        )
        return [reminder_of(r) for r in rows]

    async def count_active(self) -> int:
        row = await self._db.fetchone("SELECT COUNT(*) AS n FROM reminders WHERE status = 'active'")
        return int(row["n"]) if row else 0

    async def active(self) -> list[Reminder]:
        rows = await self._db.fetchall(
            f"SELECT {COLUMNS} FROM reminders WHERE status = 'active' ORDER BY next_fire_at"
        )
        return [reminder_of(r) for r in rows]

    async def active_page(self, limit: int, offset: int = 0) -> list[Reminder]:
        """One page of every active reminder, grouped by user and chat."""
        rows = await self._db.fetchall(
            f"SELECT {COLUMNS} FROM reminders WHERE status = 'active'"
            " ORDER BY channel, user_id, chat_id, next_fire_at, id LIMIT ? OFFSET ?",
            (limit, offset),
        )
        return [reminder_of(r) for r in rows]

    async def active_for_user(
        self, channel: str, user_id: str, workspace: str | None = None
    ) -> list[Reminder]:
        """The user's active reminders; with ``workspace``, only those set in it."""
        rows = await self._db.fetchall(
            f"SELECT {COLUMNS} FROM reminders WHERE status = 'active' AND channel = ?"
            " AND user_id = ? AND (? IS NULL OR workspace = ?) ORDER BY next_fire_at",
            (channel, user_id, workspace, workspace),
        )
        return [reminder_of(r) for r in rows]

    async def active_in_chat(self, channel: str, chat_id: str) -> list[Reminder]:
        """The active reminders set in a chat (any thread of it), by anyone."""
        rows = await self._db.fetchall(
            f"SELECT {COLUMNS} FROM reminders WHERE status = 'active' AND channel = ?"
            " AND chat_id = ? ORDER BY next_fire_at, id",
            (channel, chat_id),
        )
        return [reminder_of(r) for r in rows]

    async def count_active_for_user(self, channel: str, user_id: str) -> int:
        row = await self._db.fetchone(
            "SELECT COUNT(*) AS n FROM reminders WHERE status = 'active' AND channel = ?"
            " AND user_id = ?",
            (channel, user_id),
        )
        return int(row["n"]) if row else 0

    async def fired_many(self, entries: list[tuple[int, datetime, datetime | None, bool]]) -> None:
        """Record a batch of firings (id, fired at, next fire or None, missed) at once.

        Only rows still active move on: one cancelled while it fired stays cancelled.
        """
        rows = fired_rows(entries)
        await self._db.executemany(
            "UPDATE reminders SET last_fired_at = ?, next_fire_at = ?, status = ?,"
            " attempts = attempts + 1 WHERE id = ? AND status = 'active'",
            rows,
        )

    async def to_replan(self) -> list[Reminder]:
        """The active reminders an upgrade listed to have their next run worked out
        again (migration 0021; bot/reminders/replan.py); usually none."""
        rows = await self._db.fetchall(
            # CROSS JOIN: SQLite reads the (usually empty) list first, not every reminder.
            f"SELECT {COLUMNS} FROM reminder_replans CROSS JOIN reminders ON id = reminder_id"
            " WHERE status = 'active' ORDER BY id"
        )
        return [reminder_of(r) for r in rows]

    async def replanned(self) -> None:
        """Every listed reminder was worked out again: the list is emptied."""
        await self._db.execute("DELETE FROM reminder_replans")

    async def moved_many(self, entries: list[tuple[int, datetime, datetime]]) -> int:
        """Move next runs: (id, the next run as read, the new one). Only a row still
        active whose next run is still the one read moves (a fire or a cancel since
        wins); returns how many moved."""
        moved = 0
        for reminder_id, was, new in entries:
            moved += await self._db.execute_count(
                "UPDATE reminders SET next_fire_at = ?"
                " WHERE id = ? AND status = 'active' AND next_fire_at = ?",
                (new.isoformat(), reminder_id, was.isoformat()),
            )
        return moved

    async def rezoned_many(self, entries: list[tuple[int, datetime, str, datetime]]) -> int:
        """Move reminders to their owner's new zone: (id, the next run as read, the zone,
        the next run in it). Only a row still active whose next run is still the one
        read moves (a fire or a cancel since wins); returns how many moved."""
        moved = 0
        for reminder_id, was, tz, new in entries:
            moved += await self._db.execute_count(
                "UPDATE reminders SET timezone = ?, next_fire_at = ?"
                " WHERE id = ? AND status = 'active' AND next_fire_at = ?",
                (tz, new.isoformat(), reminder_id, was.isoformat()),
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
        """Record one firing: the next occurrence, or done (or missed) when there is none."""
        await self.fired_many([(reminder_id, fired_at, next_fire_at, missed)])

    async def set_status(self, reminder_id: int, status: ReminderStatus) -> None:
        await self._db.execute(
            "UPDATE reminders SET status = ? WHERE id = ?", (status.value, reminder_id)
        )

    async def cancel_in_chat(self, channel: str, chat_id: str, thread_id: str | None) -> int:
        """Cancel the active reminders of a chat that refuses the bot for good (all its
        threads; with ``thread_id``, only that one: "" is the chat outside threads);
        returns how many."""
        return await self._db.execute_count(
            "UPDATE reminders SET status = 'cancelled' WHERE status = 'active'"
            " AND channel = ? AND chat_id = ? AND (? IS NULL OR thread_id = ?)",
            (channel, chat_id, thread_id, thread_id),
        )

    async def move_chat(self, channel: str, chat_id: str, new_chat_id: str) -> int:
        """The active reminders of a chat that lives on under another id go there, each
        in its thread; returns how many."""
        return await self._db.execute_count(
            "UPDATE reminders SET chat_id = ? WHERE status = 'active'"
            " AND channel = ? AND chat_id = ?",
            (new_chat_id, channel, chat_id),
        )

    async def prune(self, older_than: datetime) -> int:
        """Forget finished reminders (done, cancelled, missed) whose last fire, or
        creation, came before ``older_than``; active ones are never touched."""
        return await self._db.execute_count(
            "DELETE FROM reminders WHERE status != 'active'"
            " AND COALESCE(last_fired_at, created_at) < ?",
            (older_than.isoformat(),),
        )


CACHED_USERS = 10_000  # users whose time zone is kept in memory (read on every turn)


class UserSettingsStore:
    """Per-user preferences; for now the time zone."""

    def __init__(self, db: Database) -> None:
        self._db = db
        # Read on every turn (the runtime block's clock), set rarely: cached per user.
        self._zones: LRU[tuple[str, str], str | None] = LRU(CACHED_USERS)

    async def timezone(self, channel: str, user_id: str) -> str | None:
        user = (channel, user_id)
        if user in self._zones:
            return self._zones[user]
        row = await self._db.fetchone(
            "SELECT timezone FROM user_settings WHERE channel = ? AND user_id = ?",
            (channel, user_id),
        )
        found = str(row["timezone"]) if row and row["timezone"] else None
        self._zones[user] = found
        return found

    async def set_timezone(self, channel: str, user_id: str, tz: str) -> None:
        await self._db.execute(
            "INSERT INTO user_settings (channel, user_id, timezone) VALUES (?, ?, ?)"
            " ON CONFLICT (channel, user_id) DO UPDATE SET timezone = excluded.timezone",
            (channel, user_id, tz),
        )
        self._zones[(channel, user_id)] = tz
