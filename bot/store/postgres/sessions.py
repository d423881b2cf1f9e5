"""Conversation history on PostgreSQL (see :mod:`bot.store.sessions` for what it promises).

Nothing of a session but its id is kept in memory: with several replicas on one
database, another process may have written the rows or the summary since (the SQLite
backend's tail cache rests on one daemon owning its file). A turn's start is one
transaction of a few statements.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import asyncpg

from bot.lru import LRU
from bot.messages import ChatKey, utcnow
from bot.store.postgres.database import PostgresDatabase, changed
from bot.store.sessions import (
    CACHED_SESSIONS,
    ChatSession,
    ClearHook,
    Message,
    TurnStart,
    chat_session,
    message_of,
    message_row,
    run_clear_hooks,
)

_INSERT = (
    "INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id,"
    " name, media, created_at, source_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
)
_MESSAGE = "id, role, content, tool_calls, tool_call_id, name, media"
_SESSION = (
    "WITH made AS (INSERT INTO sessions (channel, chat_id, thread_id, created_at, updated_at)"
    " VALUES ($1, $2, $3, $4, $4) ON CONFLICT DO NOTHING RETURNING id)"
    " SELECT id FROM made UNION ALL SELECT id FROM sessions"
    " WHERE channel = $1 AND chat_id = $2 AND thread_id = $3 LIMIT 1"
)


class PgSessions:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db
        self._ids: LRU[ChatKey, int] = LRU(CACHED_SESSIONS)  # an id never changes
        self._clear_hooks: list[ClearHook] = []

    def add_clear_hook(self, hook: ClearHook) -> None:
        self._clear_hooks.append(hook)

    async def session_id(self, key: ChatKey) -> int:
        cached = self._ids.get(key)
        if cached is not None:
            return cached
        async with self._db.pool.acquire() as conn:
            self._ids[key] = await self._session(conn, key)
        return self._ids[key]

    async def _session(self, conn: asyncpg.Connection, key: ChatKey) -> int:
        """The id of ``key``'s session, made now when it has none (cached by the caller
        once its transaction committed: a rolled-back one made no session)."""
        cached = self._ids.get(key)
        if cached is not None:
            return cached
        params = (key.channel, key.chat_id, key.thread_id or "", utcnow().isoformat())
        found = await conn.fetchval(_SESSION, *params)
        if found is None:  # made by a transaction that committed after our snapshot
            found = await conn.fetchval(_SESSION, *params)
        return int(found)

    async def append(
        self,
        key: ChatKey,
        messages: Sequence[Mapping[str, Any]],
        *,
        source_id: str | None = None,
    ) -> None:
        if not messages:
            return
        sid = await self.session_id(key)
        now = utcnow().isoformat()
        rows = [message_row(sid, m, now, source_id) for m in messages]
        async with self._db.transaction() as conn:
            await conn.executemany(_INSERT, rows)
            await conn.execute("UPDATE sessions SET updated_at = $1 WHERE id = $2", now, sid)

    async def begin_turn(
        self, key: ChatKey, source_id: str, user: Mapping[str, Any], limit: int | None = None
    ) -> TurnStart:
        """Store the turn's user message unless ``source_id`` has one (a replay), and read
        the ``limit`` messages before it that the summary does not cover."""
        now = utcnow().isoformat()
        async with self._db.transaction() as conn:
            sid = await self._session(conn, key)
            found = await conn.fetchval(
                "SELECT id FROM messages WHERE session_id = $1 AND source_id = $2"
                " ORDER BY id LIMIT 1",
                sid,
                source_id,
            )
            if found is None:
                user_row = int(
                    await conn.fetchval(
                        _INSERT + " RETURNING id", *message_row(sid, user, now, source_id)
                    )
                )
                await conn.execute("UPDATE sessions SET updated_at = $1 WHERE id = $2", now, sid)
            else:
                user_row = int(found)
            through = await conn.fetchval(
                "SELECT through_id FROM summaries WHERE session_id = $1", sid
            )
            rows = await conn.fetch(
                f"SELECT {_MESSAGE} FROM messages WHERE session_id = $1 AND id > $2"
                " AND id < $3 ORDER BY id DESC LIMIT $4",
                sid,
                int(through or 0),
                user_row,
                limit,
            )
        self._ids[key] = sid
        before = [message_of(r) for r in reversed(rows)]
        return TurnStart(before, user_row, resumed=found is not None)

    async def retract(self, key: ChatKey, source_id: str) -> int:
        async with self._db.transaction() as conn:
            found = await conn.fetch(
                "SELECT m.session_id AS sid, MIN(m.id) AS first FROM messages m"
                " JOIN sessions s ON s.id = m.session_id"
                " WHERE s.channel = $1 AND s.chat_id = $2 AND m.source_id = $3"
                " GROUP BY m.session_id",
                key.channel,
                key.chat_id,
                source_id,
            )
            removed = 0
            for row in found:
                status = await conn.execute(
                    "DELETE FROM messages WHERE session_id = $1 AND id >= $2",
                    row["sid"],
                    row["first"],
                )
                removed += changed(status)
        return removed

    async def history(self, key: ChatKey, limit: int | None = None) -> list[Message]:
        return [m for _, m in await self.history_rows(key, limit)]

    async def history_rows(
        self, key: ChatKey, limit: int | None = None
    ) -> list[tuple[int, Message]]:
        sid = await self.session_id(key)
        rows = await self._db.fetch(
            f"SELECT {_MESSAGE} FROM messages WHERE session_id = $1 ORDER BY id DESC LIMIT $2",
            sid,
            limit,
        )
        return [message_of(r) for r in reversed(rows)]

    async def clear(self, key: ChatKey) -> int:
        sid = await self.session_id(key)
        async with self._db.transaction() as conn:
            status = await conn.execute("DELETE FROM messages WHERE session_id = $1", sid)
            await conn.execute("DELETE FROM summaries WHERE session_id = $1", sid)
        run_clear_hooks(self._clear_hooks, sid)
        return changed(status)

    async def recent(self, limit: int, offset: int = 0) -> list[ChatSession]:
        rows = await self._db.fetch(
            "SELECT s.channel, s.chat_id, s.thread_id, s.updated_at, (SELECT COUNT(*) FROM"
            " messages m WHERE m.session_id = s.id) AS n FROM sessions s"
            " ORDER BY s.updated_at DESC, s.id DESC LIMIT $1 OFFSET $2",
            limit,
            offset,
        )
        return [chat_session(r) for r in rows]

    async def summary(self, key: ChatKey) -> tuple[str, int] | None:
        sid = await self.session_id(key)
        row = await self._db.fetchrow(
            "SELECT summary, through_id FROM summaries WHERE session_id = $1", sid
        )
        return (str(row["summary"]), int(row["through_id"])) if row else None

    async def save_summary(self, key: ChatKey, summary: str, through_id: int) -> None:
        sid = await self.session_id(key)
        await self._db.execute(
            "INSERT INTO summaries (session_id, summary, through_id, updated_at)"
            " VALUES ($1, $2, $3, $4) ON CONFLICT (session_id) DO UPDATE SET"
            " summary = excluded.summary, through_id = excluded.through_id,"
            " updated_at = excluded.updated_at",
            sid,
            summary,
            through_id,
            utcnow().isoformat(),
        )

    async def prune_summarized(self, older_than: datetime) -> int:
        return await self._db.execute(
            "DELETE FROM messages WHERE created_at < $1 AND id <= COALESCE((SELECT"
            " s.through_id FROM summaries s WHERE s.session_id = messages.session_id), 0)",
            older_than.isoformat(),
        )
