"""Reminders at scale: rescheduling 100,000 stored reminders at start (time and memory),
and 1,000 reminders due in the same second (lateness from due time to the channel)."""

from __future__ import annotations

import asyncio
import gc
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.common import Row, Target, percentile, rss_mb
from bot.bus.durable import DurableBus
from bot.delivery import Delivery
from bot.messages import OutboundMessage
from bot.reminders.scheduler import ReminderScheduler
from bot.store.db import Database
from bot.store.inbox import InboxStore
from bot.store.outbox import OutboxStore
from bot.store.reminders import ReminderStore
from channels.base import Sent

STORED = 100_000
BURST = 1_000


class _Recorder:
    name = "bench"
    trusted = True
    connected = True

    def __init__(self, expected: int) -> None:
        self.received: list[tuple[float, OutboundMessage]] = []
        self.done = asyncio.Event()
        self._expected = expected

    async def start(self, put_inbound: object) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def typing(self, key: object, message_id: str | None = None) -> None:
        return None

    async def send(self, msg: OutboundMessage) -> Sent:
        self.received.append((time.time(), msg))
        if len(self.received) >= self._expected:
            self.done.set()
        return Sent()


async def _insert(db: Database, count: int, first: datetime, spread_s: float) -> None:
    now = datetime.now(UTC).isoformat()
    rows = [
        (
            "bench",
            f"chat{i % 5000}",
            "",
            f"user{i % 5000}",
            f"reminder {i}",
            "reminder",
            (first + timedelta(seconds=spread_s * i / max(1, count))).isoformat(),
            None,
            "UTC",
            now,
        )
        for i in range(count)
    ]
    await db.executemany(
        "INSERT INTO reminders (channel, chat_id, thread_id, user_id, content, kind,"
        " next_fire_at, recurrence, timezone, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        rows,
    )


async def _reschedule(tmp: Path, spread_s: float, label: str) -> list[Row]:
    db = Database(tmp / f"a{spread_s}.db")
    await db.open()
    await _insert(db, STORED, datetime.now(UTC) + timedelta(minutes=1), spread_s)
    bus = DurableBus(InboxStore(db), OutboxStore(db))
    gc.collect()
    before = rss_mb()
    started = time.perf_counter()
    scheduler = ReminderScheduler(ReminderStore(db), bus)
    count = await scheduler.start()
    elapsed = time.perf_counter() - started
    gc.collect()
    grown = rss_mb() - before
    jobs = scheduler.job_count
    await scheduler.stop()
    await db.close()
    return [
        Row(
            f"reminders: reschedule at start ({label})",
            "reminders",
            f"{count:,}",
            f"{jobs} timer jobs for the next hour",
        ),
        Row(
            f"reminders: reschedule at start ({label})",
            "time",
            f"{elapsed:.2f} s",
            f"{elapsed / count * 1e6:.0f} µs per reminder",
        ),
        Row(
            f"reminders: reschedule at start ({label})",
            "memory",
            f"{grown:.0f} MB",
            f"{grown * 1024 * 1024 / count:.0f} B per reminder",
        ),
    ]


async def _burst(tmp: Path) -> list[Row]:
    db = Database(tmp / "b.db")
    await db.open()
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=3)
    await _insert(db, BURST, due, 0)
    outbox = OutboxStore(db)
    bus = DurableBus(InboxStore(db), outbox)
    channel = _Recorder(BURST)
    delivery = Delivery(outbox, {"bench": channel})
    scheduler = ReminderScheduler(ReminderStore(db), bus)
    await scheduler.start()

    router = asyncio.create_task(delivery.route(bus))
    await asyncio.wait_for(channel.done.wait(), timeout=120)
    lateness = [(t - due.timestamp()) * 1000 for t, _ in channel.received]
    router.cancel()
    await scheduler.stop()
    await delivery.drain(5)
    await db.close()
    return [
        Row(
            "reminders: 1,000 due in one second",
            "lateness p50",
            f"{percentile(lateness, 50):.0f} ms",
            "due time to the channel's send()",
        ),
        Row(
            "reminders: 1,000 due in one second",
            "lateness p99",
            f"{percentile(lateness, 99):.0f} ms",
        ),
        Row(
            "reminders: 1,000 due in one second",
            "delivered",
            f"{len(lateness):,}",
            "each once, via outbox",
            # at least BURST, or the wait above times out; more would be a double send
            Target(len(lateness), BURST, " sends"),
        ),
    ]


async def run() -> list[Row]:
    with tempfile.TemporaryDirectory() as tmp:
        rows = await _reschedule(Path(tmp), 86400 * 30, "spread over 30 days")
        rows += await _reschedule(Path(tmp), 3000, "all due within the hour")
        rows += await _burst(Path(tmp))
    return rows
