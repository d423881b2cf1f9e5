"""Conversation history on PostgreSQL (see :mod:`bot.store.sessions` for what it promises).

With several replicas on one database another process may write a chat's rows and
summary, so what is kept in memory besides session ids is trusted only under the fence
it was read or written with: while this replica holds the chat's lease under the same
token (a lease taken again comes with a new one) it is the chat's only writer, and it
keeps the chat's summary and unsummarized tail as the SQLite backend does (bot/store/
tails.py: a turn then reads no row, and the rows it sends are the same objects as last
turn's, whose sent forms the prompt builder remembers). Without a fence (the CLI, tests)
nothing but ids is trusted. A turn's start, and an append, are one statement each (one
round trip), carrying the fence check (``FENCE``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from bot.cluster import fence
from bot.cluster.fence import Fence
from bot.lru import LRU
from bot.messages import ChatKey, utcnow
from bot.store.postgres.database import PostgresDatabase, Record, changed
from bot.store.postgres.statements import FENCE
from bot.store.sessions import (
    CACHED_SESSIONS,
    ChatSession,
    ClearHook,
    Message,
    TurnStart,
    chat_session,
    message_of,
    message_row,
    read_back,
    run_clear_hooks,
)
from bot.store.tails import TailCache

_MESSAGE = "id, role, content, tool_calls, tool_call_id, name, media"
_APPEND = (  # the rows in order (ids ascend as given), and the session's last use
    "WITH added AS (INSERT INTO messages (session_id, role, content, tool_calls,"
    " tool_call_id, name, media, created_at, source_id)"
    " SELECT $1, r, c, t, i, n, m, $2, $3 FROM unnest($4::text[], $5::text[], $6::text[],"
    " $7::text[], $8::text[], $9::text[]) WITH ORDINALITY AS x(r, c, t, i, n, m, k)"
    f" WHERE {FENCE} ORDER BY k RETURNING id),"
    " touched AS (UPDATE sessions SET updated_at = $2 WHERE id = $1)"
    " SELECT id FROM added ORDER BY id"
)
# A turn's start: its user message stored unless that message has a row already (a
# replay), and the session touched; the turn's row and whether it was there already.
_START = f"""
WITH found AS (
    SELECT id FROM messages WHERE session_id = $1 AND source_id = $2 ORDER BY id LIMIT 1
), made AS (
    INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, name, media,
        created_at, source_id)
    SELECT $1, $3, $4, $5, $6, $7, $8, $9, $2 WHERE NOT EXISTS (SELECT 1 FROM found) AND {FENCE}
    RETURNING id
), touched AS (
    UPDATE sessions SET updated_at = $9 WHERE id = $1 AND EXISTS (SELECT 1 FROM made)
), turn AS (
    SELECT id, TRUE AS resumed FROM found UNION ALL SELECT id, FALSE FROM made
)
"""
# ... and, with no tail in memory, the rows after the summary's cursor before it, with
# that summary: one row per message (none: one row of NULLs after the first columns).
_BEGIN = (
    _START
    + """SELECT turn.id AS user_row, turn.resumed, s.summary, s.through_id, m.id, m.role,
    m.content, m.tool_calls, m.tool_call_id, m.name, m.media
FROM turn
LEFT JOIN summaries s ON s.session_id = $1
LEFT JOIN LATERAL (
    SELECT id, role, content, tool_calls, tool_call_id, name, media FROM messages
    WHERE session_id = $1 AND id > COALESCE(s.through_id, 0) AND id < turn.id
    ORDER BY id DESC LIMIT $10
) m ON TRUE
"""
)
_STARTED = _START + "SELECT id AS user_row, resumed FROM turn"
Summary = tuple[str, int] | None
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
        # Per session: the fence its summary and tail were read or written under, the
        # summary; the tails themselves (bounded by rows).
        self._fences: LRU[int, Fence] = LRU(CACHED_SESSIONS)
        self._summaries: LRU[int, Summary] = LRU(CACHED_SESSIONS)
        self._tails = TailCache()
        self._clear_hooks: list[ClearHook] = []

    def add_clear_hook(self, hook: ClearHook) -> None:
        self._clear_hooks.append(hook)

    def _trusted(self, sid: int) -> bool:
        """Whether what is kept of session ``sid`` is current: read or written under the
        fence the running work holds now."""
        held = fence.current()
        return held is not None and self._fences.get(sid) == held

    def _forget(self, sid: int) -> None:
        self._fences.pop(sid)
        self._summaries.pop(sid)
        self._tails.drop(sid)

    def _keep(self, sid: int, summary: Summary) -> bool:
        """Keep ``summary`` (just read or written) under the current fence; False with
        none (nothing is kept)."""
        held = fence.current()
        if held is None:
            self._forget(sid)
            return False
        if self._fences.get(sid) != held:
            self._tails.drop(sid)  # written or read under another lease: not continued
        self._fences[sid] = held
        self._summaries[sid] = summary
        return True

    async def session_id(self, key: ChatKey) -> int:
        cached = self._ids.get(key)
        if cached is not None:
            return cached
        params = (key.channel, key.chat_id, key.thread_id or "", utcnow().isoformat())
        async with self._db.connection() as conn:
            found = await conn.fetchval(_SESSION, *params)
            if found is None:  # made by a transaction that committed after our snapshot
                found = await conn.fetchval(_SESSION, *params)
        self._ids[key] = int(found)
        return self._ids[key]

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
        columns = [list(c) for c in zip(*(r[1:7] for r in rows), strict=True)]
        ids = await self._db.fetch(_APPEND, sid, now, source_id, *columns)
        if self._trusted(sid):
            self._tails.extend(
                sid, [(int(i["id"]), read_back(r)) for i, r in zip(ids, rows, strict=True)]
            )
        else:
            self._tails.drop(sid)

    async def begin_turn(
        self, key: ChatKey, source_id: str, user: Mapping[str, Any], limit: int | None = None
    ) -> TurnStart:
        """Store the turn's user message unless ``source_id`` has one (a replay), and give
        the ``limit`` messages before it that the summary does not cover: the tail kept
        under this fence, else read in the same statement."""
        sid = await self.session_id(key)
        stored = message_row(sid, user, utcnow().isoformat(), source_id)
        tail = self._tails.newest(sid, limit) if self._trusted(sid) else None
        if tail is not None:
            (started,) = await self._db.fetch(_STARTED, sid, source_id, *stored[1:8])
            if not started["resumed"]:  # a replay reads afresh: rows after it may exist
                return self._started(sid, int(started["user_row"]), stored, tail)
        rows = await self._db.fetch(_BEGIN, sid, source_id, *stored[1:8], limit)
        first, before = rows[0], _before(rows)
        through = first["through_id"]
        kept = self._keep(
            sid, (str(first["summary"]), int(through)) if through is not None else None
        )
        if first["resumed"] or not kept:
            self._tails.drop(sid)
            return TurnStart(before, int(first["user_row"]), resumed=bool(first["resumed"]))
        complete = limit is None or len(before) < limit
        self._tails.load(sid, before, complete=complete, keep=limit)
        return self._started(sid, int(first["user_row"]), stored, before)

    def _started(
        self, sid: int, user_row: int, stored: tuple[Any, ...], before: list[tuple[int, Message]]
    ) -> TurnStart:
        self._tails.extend(sid, [(user_row, read_back(stored))])
        return TurnStart(before, user_row, resumed=False)

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
        for row in found:
            self._forget(int(row["sid"]))
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
        self._forget(sid)
        run_clear_hooks(self._clear_hooks, sid, key)
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

    async def summary(self, key: ChatKey) -> Summary:
        """The archived summary; under the fence a turn read it with, as it read it (this
        replica holds the chat: nobody else wrote it since)."""
        sid = await self.session_id(key)
        if self._trusted(sid) and sid in self._summaries:
            return self._summaries[sid]
        row = await self._db.fetchrow(
            "SELECT summary, through_id FROM summaries WHERE session_id = $1", sid
        )
        found = (str(row["summary"]), int(row["through_id"])) if row else None
        if self._trusted(sid):
            self._summaries[sid] = found
        return found

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
        if self._trusted(sid):
            self._summaries[sid] = (summary, through_id)
            self._tails.trim(sid, through_id)
        else:
            self._forget(sid)

    async def prune_summarized(self, older_than: datetime) -> int:
        return await self._db.execute(
            "DELETE FROM messages WHERE created_at < $1 AND id <= COALESCE((SELECT"
            " s.through_id FROM summaries s WHERE s.session_id = messages.session_id), 0)",
            older_than.isoformat(),
        )


def _before(rows: Sequence[Record]) -> list[tuple[int, Message]]:
    """The history rows of a turn's start (:data:`_BEGIN`), oldest first."""
    return [message_of(r) for r in reversed(rows) if r["id"] is not None]
