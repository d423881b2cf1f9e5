"""The price of a durable inbox journal: the commit a platform acknowledgement waits for
runs under ``synchronous=FULL`` (an fsync of the WAL per inbound message); every other
write stays ``NORMAL``. Measured on a database in the working directory, so on the disk
the daemon's data dir would use, not on a RAM-backed /tmp. Messages that arrive together
(webhook posts, Slack and Discord events, several channels) share one fsynced commit
(bot.store.group): the last row times that against the same messages one at a time."""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from bench.common import Row, percentile
from bot.messages import ChatKey, InboundMessage, to_json
from bot.store.db import Database
from bot.store.inbox import InboxStore

MESSAGES = 500
_INSERT = (
    "INSERT OR IGNORE INTO inbox (channel, chat_id, thread_id, message_id, payload,"
    " received_at) VALUES (?, ?, ?, ?, ?, ?)"
)


async def _accepts(db: Database, durable: bool) -> list[float]:
    inbox, took = InboxStore(db), []
    for i in range(MESSAGES):
        msg = InboundMessage(
            ChatKey("bench", "c1"), "u1", "hello " * 20, message_id=f"{durable}{i}"
        )
        started = time.perf_counter()
        if durable:
            await inbox.accept(msg)
        else:  # the same row, committed under the connection's NORMAL
            params = ("bench", "c1", "", msg.message_id, to_json(msg), msg.received_at.isoformat())
            await db.execute_count(_INSERT, params)
        took.append((time.perf_counter() - started) * 1000)
    return took


async def _together(db: Database) -> tuple[float, int]:
    """MESSAGES accepts at once, from as many chats; wall ms and fsynced commits."""
    trace: list[str] = []
    await db.run(lambda c: c.set_trace_callback(trace.append))
    inbox = InboxStore(db)
    msgs = [
        InboundMessage(ChatKey("bench", f"c{i}"), "u1", "hello " * 20, message_id=f"t{i}")
        for i in range(MESSAGES)
    ]
    started = time.perf_counter()
    accepted = await asyncio.gather(*(inbox.accept(m) for m in msgs))
    took = (time.perf_counter() - started) * 1000
    await db.run(lambda c: c.set_trace_callback(None))
    assert all(accepted)
    return took, trace.count("PRAGMA synchronous=FULL")


async def run() -> list[Row]:
    with tempfile.TemporaryDirectory(dir=Path.cwd()) as tmp:
        db = Database(Path(tmp) / "journal.db")
        await db.open()
        try:
            normal = await _accepts(db, durable=False)
            full = await _accepts(db, durable=True)
            together, commits = await _together(db)
        finally:
            await db.close()
    rows = []
    for label, took in (("NORMAL (other writes)", normal), ("FULL (inbox journal)", full)):
        rows.append(
            Row(
                f"journal: {MESSAGES} inbound commits, synchronous={label}",
                "latency p50 / p99",
                f"{percentile(took, 50):.2f} / {percentile(took, 99):.2f} ms",
                "one commit per accepted message",
            )
        )
    rows.append(
        Row(
            f"journal: {MESSAGES} inbound messages arriving together",
            "wall / fsynced commits",
            f"{together:.1f} ms / {commits}",
            f"one at a time: {sum(full):.1f} ms / {MESSAGES}",
        )
    )
    return rows
