"""The SQLite connection and its versioned schema migrations.

One connection per daemon, WAL mode, ``PRAGMA user_version`` as the schema version.
Migrations only ever append: a database written by an older release upgrades in place.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import aiosqlite

from bot.errors import StoreError

log = logging.getLogger(__name__)

# Each entry upgrades the schema from version N to N+1. Append, never edit.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE sessions (
        id          INTEGER PRIMARY KEY,
        channel     TEXT NOT NULL,
        chat_id     TEXT NOT NULL,
        thread_id   TEXT NOT NULL DEFAULT '',
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL,
        UNIQUE (channel, chat_id, thread_id)
    );
    CREATE TABLE messages (
        id           INTEGER PRIMARY KEY,
        session_id   INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        role         TEXT NOT NULL,
        content      TEXT,
        tool_calls   TEXT,
        tool_call_id TEXT,
        name         TEXT,
        created_at   TEXT NOT NULL
    );
    CREATE INDEX messages_by_session ON messages (session_id, id);
    """,
    # 2: the durable inbox (accepted, not yet answered), the outbox (to deliver, with an
    # idempotency key) and a small key-value table (channel offsets and the like).
    """
    CREATE TABLE inbox (
        id          INTEGER PRIMARY KEY,
        channel     TEXT NOT NULL,
        chat_id     TEXT NOT NULL,
        thread_id   TEXT NOT NULL DEFAULT '',
        message_id  TEXT NOT NULL,
        payload     TEXT NOT NULL,
        status      TEXT NOT NULL DEFAULT 'pending',
        received_at TEXT NOT NULL,
        done_at     TEXT,
        UNIQUE (channel, chat_id, thread_id, message_id)
    );
    CREATE INDEX inbox_pending ON inbox (status, id);
    CREATE TABLE outbox (
        id              INTEGER PRIMARY KEY,
        delivery_key    TEXT NOT NULL UNIQUE,
        channel         TEXT NOT NULL,
        payload         TEXT NOT NULL,
        status          TEXT NOT NULL DEFAULT 'pending',
        attempts        INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TEXT NOT NULL,
        last_error      TEXT,
        created_at      TEXT NOT NULL,
        sent_at         TEXT
    );
    CREATE INDEX outbox_due ON outbox (status, next_attempt_at);
    CREATE TABLE kv (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    """,
    # 3: reminders and follow-ups (the source of truth; APScheduler is rebuilt from it)
    # and per-user settings such as the time zone.
    """
    CREATE TABLE reminders (
        id           INTEGER PRIMARY KEY,
        channel      TEXT NOT NULL,
        chat_id      TEXT NOT NULL,
        thread_id    TEXT NOT NULL DEFAULT '',
        user_id      TEXT NOT NULL,
        content      TEXT NOT NULL,
        kind         TEXT NOT NULL,
        next_fire_at TEXT,
        recurrence   TEXT,
        timezone     TEXT NOT NULL,
        status       TEXT NOT NULL DEFAULT 'active',
        created_at   TEXT NOT NULL,
        last_fired_at TEXT,
        attempts     INTEGER NOT NULL DEFAULT 0,
        source       TEXT
    );
    CREATE UNIQUE INDEX reminders_by_source ON reminders (source);
    CREATE INDEX reminders_active ON reminders (status, next_fire_at);
    CREATE INDEX reminders_by_user ON reminders (channel, user_id, status);
    CREATE TABLE user_settings (
        channel  TEXT NOT NULL,
        user_id  TEXT NOT NULL,
        timezone TEXT,
        PRIMARY KEY (channel, user_id)
    );
    """,
    # 4: the archived summary of a session's older turns, and the last message it covers.
    """
    CREATE TABLE summaries (
        session_id  INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        summary     TEXT NOT NULL,
        through_id  INTEGER NOT NULL,
        updated_at  TEXT NOT NULL
    );
    """,
    # 5: which inbound message a stored user message came from, so a turn replayed after
    # a crash resumes instead of storing (and sending) the user's words twice.
    """
    ALTER TABLE messages ADD COLUMN source_id TEXT;
    CREATE INDEX messages_by_source ON messages (session_id, source_id);
    """,
)


class Database:
    """An open aiosqlite connection with the schema at the latest version."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()

    @property
    def conn(self) -> aiosqlite.Connection:
        if self._conn is None:
            raise StoreError("database is not open")
        return self._conn

    async def open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = await aiosqlite.connect(self.path)
            self._conn.row_factory = sqlite3.Row
            await self._conn.execute("PRAGMA journal_mode=WAL")
            await self._conn.execute("PRAGMA synchronous=NORMAL")
            await self._conn.execute("PRAGMA foreign_keys=ON")
            await self._conn.execute("PRAGMA busy_timeout=5000")
            await self._migrate()
        except StoreError:
            await self.close()  # e.g. a newer schema: do not leak the connection
            raise
        except (OSError, sqlite3.Error) as exc:
            await self.close()
            raise StoreError(f"cannot open database {self.path}: {exc}") from exc

    async def close(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            await conn.close()

    async def schema_version(self) -> int:
        async with self.conn.execute("PRAGMA user_version") as cur:
            row = await cur.fetchone()
        return int(row[0]) if row else 0

    async def _migrate(self) -> None:
        current = await self.schema_version()
        if current > len(MIGRATIONS):
            raise StoreError(
                f"database schema version {current} is newer than this release "
                f"({len(MIGRATIONS)}); upgrade the daemon"
            )
        for version in range(current, len(MIGRATIONS)):
            log.info("migrating database %s to schema version %d", self.path, version + 1)
            await self.conn.executescript(
                f"BEGIN;\n{MIGRATIONS[version]}\nPRAGMA user_version = {version + 1};\nCOMMIT;"
            )

    # Every operation below holds ``_lock`` from its statement through its commit or
    # its last fetch. One connection is shared by every coroutine, and aiosqlite runs
    # each call as a separate hop to its thread: without the lock, hops of concurrent
    # operations interleave on the connection, which under load failed about 1 % of
    # turns with "sqlite3.InterfaceError: bad parameter or other API misuse".

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement, commit, and return lastrowid."""
        async with self._lock:
            async with self.conn.execute(sql, params) as cur:
                rowid = cur.lastrowid
            await self.conn.commit()
        return int(rowid or 0)

    async def execute_count(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement, commit, and return the rows it changed (0: ignored)."""
        async with self._lock:
            async with self.conn.execute(sql, params) as cur:
                count = cur.rowcount
            await self.conn.commit()
        return int(count)

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        batch = list(rows)
        if not batch:
            return
        async with self._lock:
            await self.conn.executemany(sql, batch)
            await self.conn.commit()

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        async with self._lock, self.conn.execute(sql, params) as cur:
            rows = await cur.fetchall()
        return list(rows)

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def writable(self) -> bool:
        """Cheap health probe: can we write right now?"""
        try:
            async with self._lock:
                await self.conn.execute("CREATE TEMP TABLE IF NOT EXISTS _probe (x INTEGER)")
                await self.conn.execute("DELETE FROM _probe")
                await self.conn.commit()
            return True
        except (sqlite3.Error, StoreError):
            return False
