"""APScheduler as a timer over the reminders table, which stays the source of truth.

APScheduler holds one DateTrigger job per distinct fire time inside a rolling horizon
(an hour by default), refilled from SQLite's index every few minutes and at start; so
100,000 stored reminders cost a range query, not 100,000 jobs, and reminders due in
the same second fire as one batch. ``misfire_grace_time=None``: a job that is late
(daemon down, loop busy) still runs, and this module decides what lateness means:
delivered and marked late within the grace period, reported once as missed beyond it.
Job functions are module level with plain arguments.

Exactly once: a plain reminder goes to the outbox under the key
``reminder:<id>:<fire time>`` before the reminder row moves on, so a crash in between
re-fires into a key the outbox already has. A follow-up enters the inbox under a
message id built the same way. A graceful stop waits for the fires in flight, so it
never leaves a batch half recorded for the next start to sort out.

Among replicas every replica has this timer, and each fires only the reminders of the
chats it runs (their partition's lease): one fire per occurrence, and the delivery key
refuses a second one should two ever overlap (a replica frozen past its lease). A
batch is handed over and moved on under its chats' partition fence: a replica that
lost the chats while it fired (frozen between the two writes) has both refused, so
its stale "next fire" never moves a reminder back over the new owner's.

A plain reminder is sent only while its owner may still use the bot (checked as it
fires, by today's access: a user revoked since is not pinged on, told "/cancel N ends
it", with no way left to send that /cancel); one whose owner may not is cancelled. A
follow-up is a turn, which the dispatcher's access filter already checks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger

from bot.bus.base import Bus
from bot.cluster.fence import Fence, fenced
from bot.errors import FencedOff
from bot.messages import ChatKey, InboundMessage, MessageKind, OutboundKind, OutboundMessage, utcnow
from bot.reminders.cron import next_occurrence
from bot.reminders.replan import replan
from bot.reminders.schedule import describe as describe_repeat
from bot.reminders.timeparse import format_delay, format_local
from bot.store.base import Reminders
from bot.store.reminders import Reminder, ReminderKind, ReminderStatus
from bot.text import markdown_literal

log = logging.getLogger(__name__)

LATE_AFTER = timedelta(seconds=60)  # later than this is shown as "late by ..."
RETRY_AFTER = timedelta(seconds=30)  # a hand-over that failed (database busy) is retried
STOP_WAIT_S = 10.0  # how long a stop waits for fires in flight
# Whether a reminder's owner may still use the bot in its chat (the composition root
# hands in the access control's answer; anyone, until it does).
OwnerCheck = Callable[[Reminder], Awaitable[bool]]


async def _anyone(_reminder: Reminder) -> bool:
    return True


async def fire_due_job(scheduler: ReminderScheduler, due_iso: str) -> None:
    """APScheduler entry point: fire every reminder due at or before ``due_iso``.

    The owning scheduler travels in the job's arguments (as PTB's
    JobQueue passes itself), so two daemons in one process never share a timer.
    """
    await scheduler.fire_due(datetime.fromisoformat(due_iso))


async def refill_job(scheduler: ReminderScheduler) -> None:
    await scheduler.refill()


class ReminderScheduler:
    def __init__(
        self,
        store: Reminders,
        bus: Bus,
        *,
        grace: timedelta = timedelta(hours=24),
        horizon: timedelta = timedelta(hours=1),
        clock: Callable[[], datetime] = utcnow,
        running: Callable[[str], bool] = lambda _channel: True,
        runs: Callable[[ChatKey], bool] = lambda _key: True,
        fence: Callable[[ChatKey], Fence | None] = lambda _key: None,
    ) -> None:
        self._store = store
        self._fence = fence  # among replicas: the lease a chat's fire is written under
        self._bus = bus
        # Among replicas: whether this one runs the chat. Each replica's timer fires only
        # its own chats' reminders; the replica that takes a chat over refills its timer.
        self._runs = runs
        # Whether a channel is running: a reminder for one that is not stays pending.
        self._running = running
        self.held: dict[int, str] = {}  # reminder id -> the channel it waits for
        self._grace = grace
        self._horizon = horizon
        self._clock = clock
        self._scheduler = AsyncIOScheduler(
            timezone=UTC,
            job_defaults={"misfire_grace_time": None, "coalesce": True, "max_instances": 1},
        )
        self._inflight: set[int] = set()
        self._batches = 0  # fires in flight; stop() waits for them
        self._idle = asyncio.Event()
        self._idle.set()
        self._stopped = False
        self._planned_until = datetime.min.replace(tzinfo=UTC)
        self._may_use: OwnerCheck = _anyone
        # Plain counters, read by /metrics at scrape time.
        self.scheduled = 0
        self.fired = 0
        self.late = 0
        self.missed = 0

    def check_owners(self, may_use: OwnerCheck) -> None:
        """From now on a plain reminder fires only if ``may_use`` says its owner may
        still use the bot; else it is cancelled (access is built after this timer)."""
        self._may_use = may_use

    @property
    def job_count(self) -> int:
        return len(self._scheduler.get_jobs())

    async def start(self) -> int:
        """Start the timer and plan the next horizon; returns the active reminders."""
        await replan(self._store, self._clock())
        self._scheduler.start()
        self._scheduler.add_job(
            refill_job,
            IntervalTrigger(seconds=max(1.0, self._horizon.total_seconds() / 4), timezone=UTC),
            args=[self],
            id="reminders:refill",
            replace_existing=True,
        )
        await self.refill()
        return await self._store.count_active()

    @property
    def running(self) -> bool:
        return bool(self._scheduler.running) and not self._stopped

    async def stop(self, timeout: float = STOP_WAIT_S) -> bool:
        """No new fires; then wait for those in flight. True if none was left running
        (one still running after ``timeout`` is safe too: its rows re-fire at the next
        start into delivery keys the outbox already has)."""
        if self._stopped or not self._scheduler.running:
            return self._idle.is_set()
        self._stopped = True  # APScheduler's own state changes on a later loop turn
        # Paused first: APScheduler's shutdown cancels running jobs, which cut fires
        # off mid-transaction; only once they are done is it shut down.
        self._scheduler.pause()
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            log.warning("%d reminder fires still running at stop", self._batches)
            return False
        finally:
            self._scheduler.shutdown(wait=False)
        return True

    async def refill(self) -> None:
        """Give APScheduler a job for every fire time up to now + horizon."""
        until = self._clock() + self._horizon
        for when in await self._store.due_times(until):
            self._plan(when)
        self._planned_until = until

    def schedule(self, reminder: Reminder) -> None:
        """Plan a new or moved reminder now if it falls inside the planned horizon."""
        when = reminder.next_fire_at
        if when is None or reminder.status is not ReminderStatus.ACTIVE:
            return
        self.scheduled += 1
        if when <= self._planned_until:
            self._plan(when)

    def _plan(self, when: datetime) -> None:
        # One job per second at most: a job fires everything due up to its time, so the
        # horizon never holds more than 3,600 jobs an hour however many reminders there are.
        if when.microsecond:
            when = when.replace(microsecond=0) + timedelta(seconds=1)
        job_id = f"due:{when.isoformat()}"
        if self._scheduler.get_job(job_id) is None:
            self._scheduler.add_job(
                fire_due_job,
                DateTrigger(run_date=when, timezone=UTC),
                args=[self, when.isoformat()],
                id=job_id,
            )

    async def fire_due(self, until: datetime) -> None:
        async with self._in_flight():
            due = [
                r
                for r in await self._store.due(until)
                if r.id not in self._inflight and self._runs(r.key)
            ]
            await self._fire_fenced(due)

    async def fire(self, reminder_id: int, due: datetime) -> None:
        """Fire one occurrence if it is still the reminder's next one (else: stale)."""
        async with self._in_flight():
            reminder = await self._store.get(reminder_id)
            if reminder is not None and reminder.next_fire_at == due and self._runs(reminder.key):
                await self._fire_fenced([reminder])

    async def _fire_fenced(self, reminders: list[Reminder]) -> None:
        """One batch per fence (per chat partition among replicas; one in all else)."""
        batches: dict[Fence | None, list[Reminder]] = {}
        for reminder in reminders:
            try:
                batches.setdefault(self._fence(reminder.key), []).append(reminder)
            except FencedOff:  # its chat moved on since the look: the new owner fires it
                continue
        for fence, batch in batches.items():
            with fenced(fence):
                await self._fire_batch(batch)

    @contextlib.asynccontextmanager
    async def _in_flight(self) -> AsyncIterator[None]:
        """Counts a fire while it runs, so :meth:`stop` can wait for it to finish."""
        self._batches += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._batches -= 1
            if not self._batches:
                self._idle.set()

    async def _fire_batch(self, reminders: list[Reminder]) -> None:
        """Hand a batch over in one outbox transaction, then move the rows on in one more."""
        ids = {r.id for r in reminders}
        self._inflight |= ids
        try:
            reminders = await self._owners_may_use(reminders)
            now = self._clock()
            outbound: list[OutboundMessage] = []
            followups: list[InboundMessage] = []
            records: list[tuple[int, datetime, datetime | None, bool]] = []
            for reminder in reminders:
                due = reminder.next_fire_at
                if due is None or reminder.status is not ReminderStatus.ACTIVE:
                    continue
                if self._hold(reminder):
                    continue
                lateness = now - due
                # A fire on time is never missed: at missed_grace_h = 0 every one was
                # (its wake-up is always a little late), and no follow-up ever ran.
                missed = lateness > max(self._grace, LATE_AFTER)
                if missed:
                    outbound.append(self._missed(reminder, due, lateness))
                elif reminder.kind is ReminderKind.FOLLOWUP:
                    followups.append(self._followup(reminder, due, lateness))
                else:
                    outbound.append(self._reminder(reminder, due, lateness))
                nxt = None
                if reminder.recurrence:
                    # A recurring reminder that missed several runs catches up once,
                    # then continues from now on its schedule (this run stands for the
                    # wall-clock time it was due at: see next_occurrence).
                    nxt = next_occurrence(
                        reminder.recurrence, reminder.timezone, max(now, due), since=due
                    )
                records.append((reminder.id, now, nxt, missed))
            try:
                await self._bus.put_outbound_many(outbound)
                for msg in followups:
                    await self._bus.put_inbound(msg)
                await self._store.fired_many(records)
            except FencedOff:
                log.info("%d reminders left to the replica now running their chats", len(records))
                return
            except Exception:
                log.exception("%d reminders could not be handed over; retrying", len(records))
                self._plan(now + RETRY_AFTER)
                return
            for _, _, nxt, _ in records:
                if nxt is not None and nxt <= self._planned_until:
                    self._plan(nxt)
        finally:
            self._inflight -= ids

    async def _owners_may_use(self, reminders: list[Reminder]) -> list[Reminder]:
        """The batch less the plain reminders whose owner may no longer use the bot,
        which are cancelled. A check that fails (a busy database) keeps the reminder:
        its owner had access when it was set."""
        kept: list[Reminder] = []
        for reminder in reminders:
            if (
                reminder.kind is not ReminderKind.REMINDER
                or reminder.status is not ReminderStatus.ACTIVE
                or self._hold(reminder)
                or await self._owner_may_use(reminder)
            ):
                kept.append(reminder)
                continue
            try:
                await self._store.set_status(reminder.id, ReminderStatus.CANCELLED)
            except FencedOff:
                return []  # its chat moved on: the replica running it now decides
            except Exception:
                log.exception("reminder #%d not cancelled; tried again later", reminder.id)
                continue
            log.warning(
                "reminder #%d of %s:%s cancelled, not sent: its owner may no longer use the bot",
                reminder.id,
                reminder.key.channel,
                reminder.user_id,
            )
        return kept

    async def _owner_may_use(self, reminder: Reminder) -> bool:
        try:
            return await self._may_use(reminder)
        except Exception:
            log.exception("access of reminder #%d's owner not known; sent", reminder.id)
            return True

    def _hold(self, reminder: Reminder) -> bool:
        """A reminder whose channel is not running (``bot chat``'s terminal while the
        daemon runs headless, a channel that failed to start) stays pending, never done:
        it fires once a daemon runs that channel."""
        channel = reminder.key.channel
        if self._running(channel):
            self.held.pop(reminder.id, None)
            return False
        if reminder.id not in self.held:
            log.warning(
                "reminder #%d stays pending: its channel %r is not running", reminder.id, channel
            )
        self.held[reminder.id] = channel
        return True

    def _reminder(self, reminder: Reminder, due: datetime, lateness: timedelta) -> OutboundMessage:
        self.fired += 1
        late = ""
        if lateness > LATE_AFTER:
            self.late += 1
            late = f" (late by {format_delay(lateness)})"
        # A repeat says how it repeats and how to end it: people put up with a daily ping
        # they no longer want because nothing in it says how to stop it.
        repeats = (
            f" (repeats {describe_repeat(reminder.recurrence)}; /cancel {reminder.id} ends it)"
            if reminder.recurrence
            else ""
        )
        return OutboundMessage(
            key=reminder.key,
            text=f"⏰ Reminder{late}: {markdown_literal(reminder.content)}{repeats}",
            kind=OutboundKind.REMINDER,
            idempotency_key=f"reminder:{reminder.id}:{due.isoformat()}",
            extras={"reminder_id": reminder.id},
        )

    def _missed(self, reminder: Reminder, due: datetime, lateness: timedelta) -> OutboundMessage:
        self.missed += 1
        what = "follow-up" if reminder.kind is ReminderKind.FOLLOWUP else "reminder"
        return OutboundMessage(
            key=reminder.key,
            text=(
                f"⏰ Missed {what} (was due {format_local(due, reminder.timezone)}, "
                f"{format_delay(lateness)} ago, while the bot was offline): "
                f"{markdown_literal(reminder.content)}"
            ),
            kind=OutboundKind.REMINDER,
            idempotency_key=f"reminder:{reminder.id}:{due.isoformat()}",
            extras={"reminder_id": reminder.id, "missed": True},
        )

    def _followup(self, reminder: Reminder, due: datetime, lateness: timedelta) -> InboundMessage:
        self.fired += 1
        extras: dict[str, object] = {
            "reminder_id": reminder.id,
            "scheduled_for": format_local(due, reminder.timezone),
            "workspace": reminder.workspace,  # the turn runs where the follow-up was set
        }
        if lateness > LATE_AFTER:
            self.late += 1
            extras["late_by"] = format_delay(lateness)
        return InboundMessage(
            key=reminder.key,
            user_id=reminder.user_id,
            text=reminder.content,
            kind=MessageKind.SCHEDULED,
            message_id=f"followup:{reminder.id}:{due.isoformat()}",
            extras=extras,
            chain_depth=reminder.chain_depth,
        )
