"""APScheduler as a timer over the reminders table, which stays the source of truth.

Every active reminder is one DateTrigger job at its next fire time, rebuilt from SQLite
at start. ``misfire_grace_time=None``: a job that is late (daemon down, loop busy) still
runs, and this module decides what lateness means: delivered and marked late within the
grace period, reported once as missed beyond it. Job functions are module level with
plain arguments, so a persistent job store could hold them.

Exactly once: a plain reminder goes to the outbox under the key
``reminder:<id>:<fire time>`` before the reminder row moves on, so a crash in between
re-fires into a key the outbox already has. A follow-up enters the inbox under a
message id built the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.date import DateTrigger

from bot.bus import Bus
from bot.messages import InboundMessage, MessageKind, OutboundKind, OutboundMessage, utcnow
from bot.store.reminders import Reminder, ReminderKind, ReminderStatus, ReminderStore
from bot.timeparse import format_delay, format_local, next_occurrence

log = logging.getLogger(__name__)

LATE_AFTER = timedelta(seconds=60)  # later than this is shown as "late by ..."

# The running scheduler, for the module-level job function (one per process).
_ACTIVE: dict[str, ReminderScheduler] = {}


async def fire_reminder_job(reminder_id: int, due_iso: str) -> None:
    """APScheduler entry point: plain arguments only."""
    scheduler = _ACTIVE.get("current")
    if scheduler is not None:
        await scheduler.fire(reminder_id, datetime.fromisoformat(due_iso))


class ReminderScheduler:
    def __init__(
        self,
        store: ReminderStore,
        bus: Bus,
        *,
        grace: timedelta = timedelta(hours=24),
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._store = store
        self._bus = bus
        self._grace = grace
        self._clock = clock
        self._scheduler = AsyncIOScheduler(
            timezone=UTC,
            job_defaults={"misfire_grace_time": None, "coalesce": True, "max_instances": 1},
        )
        self.fired = 0
        self.late = 0
        self.missed = 0

    @property
    def job_count(self) -> int:
        return len(self._scheduler.get_jobs())

    async def start(self) -> int:
        """Start the timer and schedule every active reminder; returns how many."""
        _ACTIVE["current"] = self
        self._scheduler.start()
        active = await self._store.active()
        for reminder in active:
            self.schedule(reminder)
        return len(active)

    def stop(self) -> None:
        if self._scheduler.running:
            self._scheduler.shutdown(wait=False)
        if _ACTIVE.get("current") is self:
            del _ACTIVE["current"]

    def schedule(self, reminder: Reminder) -> None:
        if reminder.next_fire_at is None or reminder.status is not ReminderStatus.ACTIVE:
            return
        self._scheduler.add_job(
            fire_reminder_job,
            DateTrigger(run_date=reminder.next_fire_at, timezone=UTC),
            args=[reminder.id, reminder.next_fire_at.isoformat()],
            id=f"reminder:{reminder.id}",
            replace_existing=True,
        )

    def unschedule(self, reminder_id: int) -> None:
        job = self._scheduler.get_job(f"reminder:{reminder_id}")
        if job is not None:
            job.remove()

    async def fire(self, reminder_id: int, due: datetime) -> None:
        reminder = await self._store.get(reminder_id)
        if (
            reminder is None
            or reminder.status is not ReminderStatus.ACTIVE
            or reminder.next_fire_at != due
        ):
            return  # cancelled, or a stale job for an occurrence already handled
        now = self._clock()
        lateness = now - due
        try:
            if lateness > self._grace:
                await self._report_missed(reminder, due, lateness)
            elif reminder.kind is ReminderKind.FOLLOWUP:
                await self._run_followup(reminder, due, lateness)
            else:
                await self._deliver(reminder, due, lateness)
        except Exception:
            log.exception("reminder %d could not be handed over; retrying in 30 s", reminder_id)
            self._scheduler.add_job(
                fire_reminder_job,
                DateTrigger(run_date=now + timedelta(seconds=30), timezone=UTC),
                args=[reminder.id, due.isoformat()],
                id=f"reminder:{reminder.id}",
                replace_existing=True,
            )
            return
        nxt = None
        if reminder.recurrence:
            # A recurring reminder that missed several runs catches up once, then
            # continues from now on its schedule.
            nxt = next_occurrence(reminder.recurrence, reminder.timezone, max(now, due))
        missed = lateness > self._grace and nxt is None
        await self._store.fired(reminder.id, now, nxt, missed=missed)
        if nxt is not None:
            updated = await self._store.get(reminder.id)
            if updated is not None:
                self.schedule(updated)

    async def _deliver(self, reminder: Reminder, due: datetime, lateness: timedelta) -> None:
        self.fired += 1
        late = ""
        if lateness > LATE_AFTER:
            self.late += 1
            late = f" (late by {format_delay(lateness)})"
        await self._bus.put_outbound(
            OutboundMessage(
                key=reminder.key,
                text=f"⏰ Reminder{late}: {reminder.content}",
                kind=OutboundKind.REMINDER,
                idempotency_key=f"reminder:{reminder.id}:{due.isoformat()}",
                extras={"reminder_id": reminder.id},
            )
        )

    async def _report_missed(self, reminder: Reminder, due: datetime, lateness: timedelta) -> None:
        self.missed += 1
        what = "follow-up" if reminder.kind is ReminderKind.FOLLOWUP else "reminder"
        await self._bus.put_outbound(
            OutboundMessage(
                key=reminder.key,
                text=(
                    f"⏰ Missed {what} (was due {format_local(due, reminder.timezone)}, "
                    f"{format_delay(lateness)} ago, while the bot was offline): "
                    f"{reminder.content}"
                ),
                kind=OutboundKind.REMINDER,
                idempotency_key=f"reminder:{reminder.id}:{due.isoformat()}",
                extras={"reminder_id": reminder.id, "missed": True},
            )
        )

    async def _run_followup(self, reminder: Reminder, due: datetime, lateness: timedelta) -> None:
        self.fired += 1
        extras: dict[str, object] = {
            "reminder_id": reminder.id,
            "scheduled_for": format_local(due, reminder.timezone),
        }
        if lateness > LATE_AFTER:
            self.late += 1
            extras["late_by"] = format_delay(lateness)
        await self._bus.put_inbound(
            InboundMessage(
                key=reminder.key,
                user_id=reminder.user_id,
                text=reminder.content,
                kind=MessageKind.SCHEDULED,
                message_id=f"followup:{reminder.id}:{due.isoformat()}",
                extras=extras,
            )
        )
