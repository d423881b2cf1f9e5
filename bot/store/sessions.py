"""Conversation history per chat, stored verbatim.

Strict on what is stored: every message is kept exactly as the model or user produced
it (a malformed tool call included), so history can be replayed and audited. Repairs
for the provider happen on copies, in the context governor, never here.
"""

from __future__ import annotations

import functools
import json
import logging
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.lru import LRU
from bot.messages import ChatKey, utcnow
from bot.store.db import Database
from bot.store.rows import Row
from bot.store.tails import MAX_BYTES, MAX_ROWS, TailCache
from bot.text import valid_unicode

log = logging.getLogger(__name__)

Message = dict[str, Any]
ClearHook = Callable[[int, ChatKey], None]  # (session id, session key)
# Sessions whose id and summary are kept in memory (each a few hundred bytes): the
# least recently used go first, and are read again on their next turn.
CACHED_SESSIONS = 10_000


@dataclass(frozen=True, slots=True)
class ChatSession:
    """One stored conversation as the admin page lists it."""

    key: ChatKey
    updated_at: str
    messages: int


class SessionStore:
    def __init__(
        self, db: Database, *, tail_rows: int = MAX_ROWS, tail_bytes: int = MAX_BYTES
    ) -> None:
        self._db = db
        self._ids: LRU[ChatKey, int] = LRU(CACHED_SESSIONS)
        # Read on every turn, written every few: kept here (one daemon owns the file).
        self._summaries: LRU[int, tuple[str, int] | None] = LRU(CACHED_SESSIONS)
        self._clear_hooks: list[ClearHook] = []
        self._tails = TailCache(tail_rows, tail_bytes)

    def add_clear_hook(self, hook: ClearHook) -> None:
        """Run ``hook(session_id, key)`` on :meth:`clear`: files kept for a session or its
        chat go with it."""
        self._clear_hooks.append(hook)

    async def session_id(self, key: ChatKey) -> int:
        cached = self._ids.get(key)
        if cached is not None:
            return cached
        now = utcnow().isoformat()
        self._ids[key] = await self._db.run(lambda c: _session_row(c, key, now))
        return self._ids[key]

    async def append(
        self,
        key: ChatKey,
        messages: Sequence[Mapping[str, Any]],
        *,
        source_id: str | None = None,
    ) -> None:
        """Persist messages in order; one transaction per call. ``source_id`` names the
        inbound message they answer (see :meth:`begin_turn`)."""
        if not messages:
            return
        sid = await self.session_id(key)
        now = utcnow().isoformat()
        rows = [message_row(sid, m, now, source_id) for m in messages]
        # One transaction: all rows or none.
        ids = await self._db.run_together(functools.partial(_insert, sid=sid, rows=rows, now=now))
        self._tails.extend(sid, [(i, read_back(row)) for i, row in zip(ids, rows, strict=True)])

    async def begin_turn(
        self, key: ChatKey, source_id: str, user: Mapping[str, Any], limit: int | None = None
    ) -> TurnStart:
        """Store a turn's user message unless inbound ``source_id`` already has one (a
        turn replayed after a crash), and give the ``limit`` messages before it that the
        archived summary does not cover (the prompt sends only those): from the session's
        cached tail when it has one, else read in the same trip to the database thread
        (which also finds a chat's session and summary on its first turn)."""
        known = self._ids.get(key)
        summary_known = known is not None and known in self._summaries
        cached: tuple[str, int] | None = None
        tail: list[tuple[int, Message]] | None = None
        if summary_known and known is not None:
            cached, tail = self._summaries[known], self._tails.newest(known, limit)
        now = utcnow().isoformat()
        stored = message_row(0, user, now, source_id)  # the session id goes in on the thread

        def work(c: sqlite3.Connection) -> _Begun:
            sid = known if known is not None else _session_row(c, key, now)
            found = c.execute(
                "SELECT id FROM messages WHERE session_id = ? AND source_id = ?"
                " ORDER BY id LIMIT 1",
                (sid, source_id),
            ).fetchone()
            if found is None:
                (user_row,) = _insert(c, sid, [(sid, *stored[1:])], now)
            else:
                user_row = int(found["id"])
            summary = cached if summary_known else _summary_row(c, sid)
            if tail is not None and found is None:
                return _Begun(sid, user_row, False, None, summary)
            through = summary[1] if summary is not None else 0
            params = (sid, through, user_row, -1 if limit is None else limit)
            read = [message_of(r) for r in reversed(c.execute(_SELECT_BEFORE, params).fetchall())]
            return _Begun(sid, user_row, found is not None, read, summary)

        if tail is not None:  # writes and a row or two: may share a commit on the loop
            begun = await self._db.run_together(work)
        else:  # reads up to ``limit`` rows: on the database thread, in a transaction
            begun = await self._db.run_in_transaction(work)
        sid, user_row = begun.sid, begun.user_row
        self._ids[key] = sid
        if not summary_known:
            self._cache_summary(sid, begun.summary)
        if begun.resumed:  # rows after the replayed message may exist: read it afresh later
            self._tails.drop(sid)
            return TurnStart(begun.read or [], user_row, resumed=True)
        if begun.read is not None:
            complete = limit is None or len(begun.read) < limit
            self._tails.load(sid, begun.read, complete=complete, keep=limit)
        self._tails.extend(sid, [(user_row, read_back(stored))])
        before = begun.read if begun.read is not None else tail or []
        return TurnStart(before, user_row, resumed=False)

    async def retract(self, key: ChatKey, source_id: str) -> int:
        """Forget a turn that was never processed: inbound ``source_id``'s user message in
        chat ``key`` (whichever workspace's session holds it) and the rows its turn added
        after it. Its words must not reach the model with the chat's next message."""

        def work(c: sqlite3.Connection) -> tuple[list[int], int]:
            found = c.execute(
                "SELECT m.session_id AS sid, MIN(m.id) AS first FROM messages m"
                " JOIN sessions s ON s.id = m.session_id"
                " WHERE s.channel = ? AND s.chat_id = ? AND m.source_id = ?"
                " GROUP BY m.session_id",
                (key.channel, key.chat_id, source_id),
            ).fetchall()
            removed = 0
            for row in found:
                removed += c.execute(
                    "DELETE FROM messages WHERE session_id = ? AND id >= ?",
                    (row["sid"], row["first"]),
                ).rowcount
            return [int(row["sid"]) for row in found], removed

        sids, removed = await self._db.run_in_transaction(work)
        for sid in sids:
            self._tails.drop(sid)
        return removed

    async def history(self, key: ChatKey, limit: int | None = None) -> list[Message]:
        """The newest ``limit`` messages (all when None), oldest first, as model dicts."""
        return [m for _, m in await self.history_rows(key, limit)]

    async def history_rows(
        self, key: ChatKey, limit: int | None = None
    ) -> list[tuple[int, Message]]:
        """Like :meth:`history`, with each message's row id (summaries record how far they go)."""
        sid = await self.session_id(key)
        sql = (
            "SELECT id, role, content, tool_calls, tool_call_id, name, media, created_at"
            " FROM messages"
            " WHERE session_id = ? ORDER BY id DESC"
        )
        params: tuple[Any, ...] = (sid,)
        if limit is not None:
            sql += " LIMIT ?"
            params = (sid, limit)
        rows = await self._db.fetchall(sql, params)
        return [message_of(row) for row in reversed(rows)]

    async def raw_rows(self, key: ChatKey) -> list[tuple[Any, ...]]:
        """Every stored column of a session, for audits and tests."""
        sid = await self.session_id(key)
        rows = await self._db.fetchall(
            "SELECT * FROM messages WHERE session_id = ? ORDER BY id", (sid,)
        )
        return [tuple(r) for r in rows]

    async def clear(self, key: ChatKey) -> int:
        """Forget a chat's history (the /new command). Returns messages deleted."""
        sid = await self.session_id(key)
        rows = await self._db.fetchall(
            "SELECT COUNT(*) AS n FROM messages WHERE session_id = ?", (sid,)
        )
        await self._db.execute("DELETE FROM messages WHERE session_id = ?", (sid,))
        await self._db.execute("DELETE FROM summaries WHERE session_id = ?", (sid,))
        self._summaries.pop(sid)
        self._tails.drop(sid)
        run_clear_hooks(self._clear_hooks, sid, key)
        return int(rows[0]["n"]) if rows else 0

    async def recent(self, limit: int, offset: int = 0) -> list[ChatSession]:
        """One page of the sessions, the most recently active first, with their size."""
        rows = await self._db.fetchall(
            "SELECT s.channel, s.chat_id, s.thread_id, s.updated_at, (SELECT COUNT(*) FROM"
            " messages m WHERE m.session_id = s.id) AS n FROM sessions s"
            " ORDER BY s.updated_at DESC, s.id DESC LIMIT ? OFFSET ?",
            (limit, offset),
        )
        return [chat_session(r) for r in rows]

    async def summary(self, key: ChatKey) -> tuple[str, int] | None:
        """The archived summary of older turns and the last message id it covers."""
        sid = await self.session_id(key)
        if sid in self._summaries:
            return self._summaries[sid]
        found = await self._db.run(lambda c: _summary_row(c, sid))
        self._cache_summary(sid, found)
        return found

    def _cache_summary(self, sid: int, found: tuple[str, int] | None) -> None:
        self._summaries[sid] = found

    async def prune_summarized(self, older_than: datetime) -> int:
        """Forget messages written before ``older_than`` that their session's summary
        already stands for: no prompt sends them again (the in-memory tails hold only
        rows after the summary, so nothing cached goes stale)."""
        return await self._db.execute_count(
            "DELETE FROM messages WHERE created_at < ? AND id <= COALESCE((SELECT"
            " s.through_id FROM summaries s WHERE s.session_id = messages.session_id), 0)",
            (older_than.isoformat(),),
        )

    async def save_summary(self, key: ChatKey, summary: str, through_id: int) -> None:
        sid = await self.session_id(key)
        await self._db.execute(
            "INSERT INTO summaries (session_id, summary, through_id, updated_at)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET"
            " summary = excluded.summary, through_id = excluded.through_id,"
            " updated_at = excluded.updated_at",
            (sid, summary, through_id, utcnow().isoformat()),
        )
        self._summaries[sid] = (summary, through_id)
        self._tails.trim(sid, through_id)


_INSERT = (
    "INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id,"
    " name, media, created_at, source_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_SELECT_BEFORE = (
    "SELECT id, role, content, tool_calls, tool_call_id, name, media FROM messages"
    " WHERE session_id = ? AND id > ? AND id < ? ORDER BY id DESC LIMIT ?"
)


def chat_session(r: Row) -> ChatSession:
    return ChatSession(
        ChatKey(r["channel"], r["chat_id"], r["thread_id"] or None),
        str(r["updated_at"]),
        int(r["n"]),
    )


def run_clear_hooks(hooks: Sequence[ClearHook], sid: int, key: ChatKey) -> None:
    """Each hook for a session just cleared; one that fails is logged, the rest run."""
    for hook in hooks:
        try:
            hook(sid, key)
        except Exception:  # the history is gone either way; leftovers are only disk
            log.warning("clear hook failed for session %d", sid, exc_info=True)


@dataclass(frozen=True, slots=True)
class _Begun:
    """What :meth:`SessionStore.begin_turn` learned on the database thread."""

    sid: int
    user_row: int
    resumed: bool
    read: list[tuple[int, Message]] | None  # None: the cached tail answers
    summary: tuple[str, int] | None


@dataclass(frozen=True, slots=True)
class TurnStart:
    """What a turn starts from: the stored messages before its own, oldest first."""

    before: list[tuple[int, Message]]  # those after the archived summary's cursor
    user_row: int  # the row of the turn's user message
    resumed: bool  # it was stored already: the turn is a replay


def message_row(sid: int, m: Mapping[str, Any], now: str, source_id: str | None) -> tuple[Any, ...]:
    """``m`` as its row stores it, on either backend: each text valid Unicode without a
    NUL (:func:`bot.text.valid_unicode`; PostgreSQL refuses one, SQLite kept it)."""
    calls = json.dumps(m["tool_calls"], ensure_ascii=False) if m.get("tool_calls") else None
    media = json.dumps(m["media"], ensure_ascii=False) if m.get("media") else None
    content = _text(m.get("content"))
    return (
        sid,
        str(m.get("role", "")),
        _valid(content),
        _valid(calls),
        _valid(m.get("tool_call_id")),
        _valid(m.get("name")),
        _valid(media),
        now,
        source_id,
    )


def _valid(text: Any) -> Any:
    return valid_unicode(text) if isinstance(text, str) else text


def message_of(row: Row) -> tuple[int, Message]:
    decoded = _decoded(
        row["role"],
        row["content"],
        row["tool_calls"],
        row["tool_call_id"],
        row["name"],
        media=row["media"],
    )
    return int(row["id"]), decoded


def _decoded(
    role: str,
    content: str | None,
    calls: str | None,
    call_id: str | None,
    name: str | None,
    *,
    media: str | None = None,
) -> Message:
    """A stored message as reads return it (the cached tail builds the same)."""
    msg: Message = {"role": role, "content": content}
    if calls:
        msg["tool_calls"] = json.loads(calls)
    if call_id is not None:
        msg["tool_call_id"] = call_id
    if name is not None:
        msg["name"] = name
    if media:  # a user message's attachments (bot/media/entries.py)
        msg["media"] = json.loads(media)
    return msg


def read_back(row: tuple[Any, ...]) -> Message:
    """A row as :func:`message_row` builds it, as a read of it would return it."""
    _sid, role, content, calls, call_id, name, media = row[:7]
    return _decoded(role, content, calls, call_id, name, media=media)


def _text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False)


def _insert(
    c: sqlite3.Connection, sid: int, rows: Sequence[tuple[Any, ...]], now: str
) -> list[int]:
    """Store ``rows`` (as :func:`_row` builds them) in session ``sid``; their ids. The
    caller's transaction holds them together with the session's new ``updated_at``."""
    ids = [int(c.execute(_INSERT, row).lastrowid or 0) for row in rows]
    c.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, sid))
    return ids


def _session_row(c: sqlite3.Connection, key: ChatKey, now: str) -> int:
    """The id of ``key``'s session, made now when it has none; database thread only."""
    thread = key.thread_id or ""
    c.execute(
        "INSERT OR IGNORE INTO sessions (channel, chat_id, thread_id, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?)",
        (key.channel, key.chat_id, thread, now, now),
    )
    row = c.execute(
        "SELECT id FROM sessions WHERE channel = ? AND chat_id = ? AND thread_id = ?",
        (key.channel, key.chat_id, thread),
    ).fetchone()
    return int(row["id"])


def _summary_row(c: sqlite3.Connection, sid: int) -> tuple[str, int] | None:
    row = c.execute(
        "SELECT summary, through_id FROM summaries WHERE session_id = ?", (sid,)
    ).fetchone()
    return (str(row["summary"]), int(row["through_id"])) if row else None
