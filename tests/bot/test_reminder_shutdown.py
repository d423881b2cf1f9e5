"""A stop during a batch fire: the fire finishes before the database closes, so each
reminder of the batch fires exactly once across the restart (never half recorded)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections import Counter
from datetime import timedelta

from bot.messages import ChatKey, utcnow
from bot.store.reminders import ReminderKind
from tests.fakes.channel import FakeChannel
from tests.fakes.storage import faulty_storage

BATCH = 40


async def test_stop_during_a_batch_fire_fires_each_reminder_once(daemon_factory, tmp_path):
    data = tmp_path / "data"
    holds = {}

    def slow_disk(f):  # the batch's "fired" transaction waits, as on a slow disk
        holds["fired_many"] = f.hold("fired_many")
        return f

    first, chat1 = await daemon_factory(data, stores=faulty_storage(reminders=slow_disk))
    due = utcnow() - timedelta(seconds=1)
    for i in range(BATCH):
        await first.reminders._store.add(
            ChatKey("test", "c1"),
            "u1",
            content=f"r{i}",
            kind=ReminderKind.REMINDER,
            fire_at=due,
            recurrence=None,
            timezone="UTC",
        )
    await first.scheduler.refill()
    entered, release = holds["fired_many"]
    await asyncio.wait_for(entered.wait(), 5)  # handed to the outbox, not yet recorded

    stopping = asyncio.create_task(first.stop(timeout=2))
    done, _ = await asyncio.wait({stopping}, timeout=0.2)
    assert not done, "stop returned while a reminder fire was still running"
    release.set()
    await asyncio.wait_for(stopping, 10)
    with sqlite3.connect(data / "bot.db") as db:  # the batch was recorded whole
        (active,) = db.execute("SELECT COUNT(*) FROM reminders WHERE status = 'active'").fetchone()
    assert active == 0

    chat2 = FakeChannel()
    second, _ = await daemon_factory(data, channel=chat2)
    await second.stop(timeout=2)
    sent = Counter(m.text for m in [*chat1.sent, *chat2.sent] if m.text.startswith("⏰"))
    assert len(sent) == BATCH and set(sent.values()) == {1}, sent
