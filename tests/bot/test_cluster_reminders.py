"""A reminder fire among replicas on the PostgreSQL store, when the replica firing it
loses the chat in the middle: frozen between handing the occurrence to the outbox and
moving the reminder on, it resumes after another replica took the chat and fired it.
Its stale "next fire" must not move the reminder back (the new owner's next occurrence
would then be taken for the old one, whose delivery key exists: that occurrence was
never sent)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from bot.bus.durable import DurableBus
from bot.cluster.replica import PgCluster, Timing
from bot.messages import ChatKey, utcnow
from bot.reminders.scheduler import ReminderScheduler
from bot.store.reminders import ReminderKind
from tests.bot.test_cluster_leases import Events
from tests.fakes.pg_schema import empty_schema, opened
from tests.fakes.storage import Faulty
from tests.fakes.waiting import STEP_S, until

# A tick may take ttl_s / 2: 1 s of room on a loaded machine (at 0.5 s the new owner once
# never completed one in 30 s while the whole suite ran beside it).
TIMING = Timing(ttl_s=2.0, renew_s=0.1, partitions=1)
KEY = ChatKey("telegram", "c1")
LATER = timedelta(minutes=5)  # the new owner fires this much later on its clock


async def test_a_fire_whose_chat_moved_on_midway_does_not_move_the_reminder_back() -> None:
    async with empty_schema() as url, opened(url) as storage:
        a = PgCluster(url, timing=TIMING, label="a")
        await a.start(Events())
        reminder = await storage.reminders.add(
            KEY,
            "u1",
            content="stand up",
            kind=ReminderKind.REMINDER,
            fire_at=utcnow() - timedelta(seconds=1),
            recurrence="* * * * *",
            timezone="UTC",
        )
        slow = Faulty(storage.reminders)
        entered, release = slow.hold("fired_many")
        bus = DurableBus(storage.inbox, storage.outbox, shared=True)
        timer_a = ReminderScheduler(slow, bus, runs=a.runs, fence=a.fence)
        firing = asyncio.create_task(timer_a.fire_due(utcnow()))
        await asyncio.wait_for(entered.wait(), STEP_S)  # in the outbox, not moved on
        assert a._task is not None
        a._task.cancel()  # frozen: it renews nothing more
        b = PgCluster(url, timing=TIMING, label="b")
        try:
            await b.start(Events())
            await until(lambda: b.runs(KEY), STEP_S)  # a's lease lapsed; b took it
            timer_b = ReminderScheduler(
                storage.reminders, bus, runs=b.runs, fence=b.fence, clock=lambda: utcnow() + LATER
            )
            await timer_b.fire_due(utcnow() + LATER)
            moved = await storage.reminders.get(reminder.id)
            assert moved is not None and moved.next_fire_at is not None
            assert moved.next_fire_at > utcnow() + LATER - timedelta(seconds=1)
            release.set()  # a resumes with its stale next fire in hand
            await asyncio.wait_for(firing, STEP_S)
            after = await storage.reminders.get(reminder.id)
            assert after is not None and after.next_fire_at == moved.next_fire_at
            assert await storage.outbox.depth() == 1  # the occurrence, queued once
        finally:
            await b.stop()
            await a.stop()
