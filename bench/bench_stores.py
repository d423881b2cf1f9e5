"""The store's share of a turn on each backend, in one run: the database thread (what
``bot run`` uses on SQLite), the same statements on aiosqlite (the driver it replaced,
kept as a dev dependency for this row), and PostgreSQL (asyncpg), whose CPU counts the
server's backend processes serving the bench's connections too (psutil).

A turn's store work, as the daemon does it: journal the message, count the attempt,
begin the turn (store the user message, read what came before), append the answer,
queue it, mark it sent, mark the message done. CHATS chats take turns concurrently, as a
busy daemon's lanes do. Skipped for PostgreSQL when ``BOT_BENCH_POSTGRES_URL`` (default:
the local test server) does not answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiosqlite
import asyncpg

from bench.common import Row, cpu_s
from bench.pgserver import PG_URL, cpu_of, writer_pids
from bot.messages import ChatKey, InboundMessage, OutboundMessage, to_json, utcnow
from bot.store.base import Storage
from bot.store.db import MIGRATIONS
from bot.store.postgres import postgres_storage
from bot.store.sqlite import sqlite_storage

CHATS = 20
TURNS = 15  # per chat

Turn = Callable[[int, int], Awaitable[None]]


def _message(chat: int, n: int) -> InboundMessage:
    return InboundMessage(
        ChatKey("bench", f"c{chat}"), "u1", f"question {n} " * 8, message_id=f"{n}"
    )


async def _storage_turn(storage: Storage, chat: int, n: int) -> None:
    msg = _message(chat, n)
    await storage.inbox.accept(msg)
    await storage.inbox.started(msg)
    await storage.sessions.begin_turn(
        msg.key, msg.message_id, {"role": "user", "content": msg.text}, 40
    )
    answer = {"role": "assistant", "content": f"answer {n} " * 20}
    await storage.sessions.append(msg.key, [answer], source_id=msg.message_id)
    reply = OutboundMessage(msg.key, answer["content"], reply_to=msg.message_id)
    await storage.outbox.add(reply)
    await storage.outbox.mark_sent(reply)
    await storage.inbox.done(msg)


async def _aiosqlite_turn(conn: aiosqlite.Connection, chat: int, n: int) -> None:
    """The same statements on aiosqlite: one transaction per step, as the store commits."""
    msg, now = _message(chat, n), utcnow().isoformat()
    key = ("bench", f"c{chat}", "", msg.message_id)
    row = "channel = ? AND chat_id = ? AND thread_id = ? AND message_id = ?"
    await conn.execute(
        "INSERT OR IGNORE INTO inbox (channel, chat_id, thread_id, message_id, payload,"
        " received_at) VALUES (?, ?, ?, ?, ?, ?)",
        (*key, to_json(msg), now),
    )
    await conn.commit()
    await conn.execute(f"UPDATE inbox SET attempts = attempts + 1 WHERE {row}", key)
    await conn.commit()
    await conn.execute(
        "INSERT OR IGNORE INTO sessions (channel, chat_id, thread_id, created_at, updated_at)"
        " VALUES (?, ?, '', ?, ?)",
        ("bench", f"c{chat}", now, now),
    )
    async with conn.execute(
        "SELECT id FROM sessions WHERE channel = ? AND chat_id = ? AND thread_id = ''",
        ("bench", f"c{chat}"),
    ) as cur:
        (sid,) = await cur.fetchone()  # type: ignore[misc]
    insert = (
        "INSERT INTO messages (session_id, role, content, created_at, source_id)"
        " VALUES (?, ?, ?, ?, ?)"
    )
    cur = await conn.execute(insert, (sid, "user", msg.text, now, msg.message_id))
    user_row = cur.lastrowid
    async with conn.execute(
        "SELECT id, role, content, tool_calls, tool_call_id, name FROM messages"
        " WHERE session_id = ? AND id < ? ORDER BY id DESC LIMIT 40",
        (sid, user_row),
    ) as cur:
        [dict(r) for r in await cur.fetchall()]
    await conn.commit()
    answer = f"answer {n} " * 20
    await conn.execute(insert, (sid, "assistant", answer, now, msg.message_id))
    await conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, sid))
    await conn.commit()
    reply = OutboundMessage(msg.key, answer, reply_to=msg.message_id)
    await conn.execute(
        "INSERT OR IGNORE INTO outbox (delivery_key, channel, payload, next_attempt_at,"
        " created_at) VALUES (?, ?, ?, ?, ?)",
        (reply.delivery_key, "bench", json.dumps(to_json(reply)), now, now),
    )
    await conn.commit()
    await conn.execute(
        "UPDATE outbox SET status = 'sent', sent_at = ? WHERE delivery_key = ?",
        (now, reply.delivery_key),
    )
    await conn.commit()
    await conn.execute(f"UPDATE inbox SET status = 'done', done_at = ? WHERE {row}", (now, *key))
    await conn.commit()


async def _drive(turn: Turn, cpu: Callable[[], float]) -> float:
    """CPU ms per turn over CHATS concurrent chats of TURNS turns each."""

    async def chat(c: int) -> None:
        for n in range(TURNS):
            await turn(c, n)

    started = cpu()
    await asyncio.gather(*(chat(c) for c in range(CHATS)))
    return (cpu() - started) / (CHATS * TURNS) * 1000


async def _thread(tmp: Path) -> float:
    storage = sqlite_storage(tmp / "thread.db")
    await storage.backend.open()
    try:
        return await _drive(lambda c, n: _storage_turn(storage, c, n), cpu_s)
    finally:
        await storage.backend.close()


async def _aiosqlite(tmp: Path) -> float:
    path = tmp / "aiosqlite.db"
    prepared = sqlite_storage(path)  # the same schema, made by the store's migrations
    await prepared.backend.open()
    await prepared.backend.close()
    async with aiosqlite.connect(path) as conn:
        conn.row_factory = aiosqlite.Row
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA synchronous=NORMAL")
        return await _drive(lambda c, n: _aiosqlite_turn(conn, c, n), cpu_s)


async def _postgres() -> float | None:
    try:
        admin = await asyncpg.connect(PG_URL, timeout=3)
    except (OSError, TimeoutError, asyncpg.PostgresError):
        return None
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    await admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        joint = "&" if "?" in PG_URL else "?"
        storage = postgres_storage(f"{PG_URL}{joint}search_path={schema}")
        await storage.backend.open()
        try:
            servers = await _server_processes(storage)
            return await _drive(
                lambda c, n: _storage_turn(storage, c, n), lambda: cpu_s() + cpu_of(servers)
            )
        finally:
            await storage.backend.close()
    finally:
        await admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
        await admin.close()


async def _server_processes(storage: Storage) -> list[int]:
    """The server's backends of every connection the store may lend (all opened first,
    through the store: it keeps the ones it lent between uses, so asking its pool for
    them all would wait for ever), and the server's writers."""
    backend: Any = storage.backend
    async with contextlib.AsyncExitStack() as held:
        conns = [
            await held.enter_async_context(backend.connection())
            for _ in range(backend.pool.get_max_size())
        ]
        pids = {await c.fetchval("SELECT pg_backend_pid()") for c in conns}
    return [*pids, *writer_pids()]


async def run() -> list[Row]:
    assert MIGRATIONS  # the schema both SQLite rows run on
    with tempfile.TemporaryDirectory(dir=Path.cwd()) as tmp:
        thread = await _thread(Path(tmp))
        other = await _aiosqlite(Path(tmp))
    pg = await _postgres()
    scenario = f"store: a turn's storage work, {CHATS} chats x {TURNS} turns"
    rows = [
        Row(
            scenario,
            "CPU per turn, database thread (SQLite)",
            f"{thread:.2f} ms",
            "what bot run uses",
        ),
        Row(
            scenario,
            "CPU per turn, aiosqlite (SQLite)",
            f"{other:.2f} ms",
            f"{other / thread:.2f}x the database thread: why aiosqlite is only a dev dependency",
        ),
    ]
    if pg is None:
        rows.append(Row(scenario, "CPU per turn, PostgreSQL", "skipped", f"no server at {PG_URL}"))
    else:
        rows.append(
            Row(
                scenario,
                "CPU per turn, PostgreSQL (asyncpg + server backends)",
                f"{pg:.2f} ms",
                f"{pg / thread:.2f}x the database thread",
            )
        )
    return rows
