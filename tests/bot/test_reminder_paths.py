"""What ``/remind`` and the ``create_reminder`` tool store and say, over the real service
and SQLite store, with the clock fixed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
import pytest_asyncio

from bot.bus.base import InProcessBus
from bot.errors import ToolError
from bot.reminders.replan import replan
from bot.reminders.scheduler import ReminderScheduler
from bot.store.db import MIGRATIONS, Database
from bot.store.reminders import Reminder, ReminderKind, ReminderStore
from tests.fakes.reminder_paths import KEY, ReminderPaths, reminder_paths

FRIDAY = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)  # Friday 2026-11-27, 13:00 in Berlin


Paths = ReminderPaths


@pytest_asyncio.fixture
async def paths(db: Database) -> AsyncIterator[Paths]:
    yield reminder_paths(db, FRIDAY)


@pytest.mark.parametrize("how", ["command", "tool"])
async def test_a_pasted_cron_with_a_day_and_a_weekday_runs_on_either(paths: Paths, how: str):
    """'0 9 1,15 * 1' first ran on 2027-02-01, the next Monday that is the 1st or 15th."""
    if how == "command":
        reply = await paths.command("/remind every 0 9 1,15 * 1 | pay the rent")
    else:
        reply = await paths.tool(content="pay the rent", time="now", recurrence="0 9 1,15 * 1")
    assert "Mon 2026-11-30 09:00" in reply
    reminder = await paths.latest()
    assert reminder.next_fire_at == datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("expr", "due", "fired", "then"),
    [
        # a daily 01:30 runs once the night New York's clocks go back...
        ("30 1 * * *", (5, 30), (5, 30, 1), (2, 6, 30)),
        # ...also when its run was late, fired during the second pass
        ("30 1 * * *", (5, 30), (6, 10, 0), (2, 6, 30)),
        # an hourly one runs at 01:00 EDT and at 01:00 EST an hour later
        ("0 * * * *", (5, 0), (5, 0, 1), (1, 6, 0)),
    ],
)
async def test_a_fired_run_moves_on_to_the_next_across_the_fall_back(
    paths: Paths, expr, due, fired, then
):
    ny = "America/New_York"
    paths.clock[0] = datetime(2026, 11, 1, 4, 10, tzinfo=UTC)  # 00:10 EDT
    reply = await paths.command(f"/remind every {expr} | check", tz=ny)
    reminder = await paths.latest()
    assert reminder.next_fire_at == datetime(2026, 11, 1, *due, tzinfo=UTC), reply
    hour, minute, second = fired
    paths.clock[0] = datetime(2026, 11, 1, hour, minute, second, tzinfo=UTC)
    await paths.service._scheduler.fire_due(paths.clock[0])
    moved = await paths.store.get(reminder.id)
    assert moved is not None
    day, hour, minute = then
    assert moved.next_fire_at == datetime(2026, 11, day, hour, minute, tzinfo=UTC)


@pytest.mark.parametrize("how", ["command", "command with a bar", "tool"])
async def test_a_day_without_a_time_is_at_nine_and_the_reply_says_so(paths: Paths, how: str):
    """'/remind friday call mum' was set for 00:00, the night before the user's Friday."""
    tz = "Europe/Berlin"
    if how == "command":
        reply = await paths.command("/remind friday call mum", tz=tz)
    elif how == "command with a bar":
        reply = await paths.command("/remind friday | call mum", tz=tz)
    else:
        reply = await paths.tool(tz=tz, content="call mum", time="friday")
    reminder = await paths.latest()
    assert reminder.next_fire_at == datetime(2026, 12, 4, 8, 0, tzinfo=UTC)  # 09:00 CET
    assert "at Fri 2026-12-04 09:00 Europe/Berlin" in reply
    assert "no time of day was given, so 09:00" in reply
    assert "'friday at 18:00'" in reply


@pytest.mark.parametrize(
    ("command", "cron", "first"),
    [
        # was "0 13 * * 5": the minute it was set (13:00 in Berlin), every Friday
        ("/remind every friday call mum", "0 9 * * 5", (2026, 12, 4, 8, 0)),
        ("/remind every day | water", "0 9 * * *", (2026, 11, 28, 8, 0)),
        ("/remind every week | review", "0 9 * * 5", (2026, 12, 4, 8, 0)),
        ("/remind every month | rent", "0 9 27 * *", (2026, 12, 27, 8, 0)),
        ("/remind every friday: call mum", "0 9 * * 5", (2026, 12, 4, 8, 0)),  # was the usage
    ],
)
async def test_a_repeat_on_days_without_a_time_is_at_nine_and_the_reply_says_so(
    paths: Paths, command: str, cron: str, first: tuple[int, ...]
):
    reply = await paths.command(command, tz="Europe/Berlin")
    reminder = await paths.latest()
    assert reminder.recurrence == cron, reply
    assert reminder.next_fire_at == datetime(*first, tzinfo=UTC)
    assert "no time of day was given, so 09:00" in reply
    repeat = command.split()[2].rstrip(":")
    assert f"'every {repeat} at 18:00'" in reply


@pytest.mark.parametrize(
    "command",
    [
        "/remind every friday at 7pm | gym",
        "/remind every 2 hours stretch",
        "/remind every 0 9 * * 1 | x",
    ],
)
async def test_a_repeat_with_its_time_gets_no_note(paths: Paths, command: str):
    reply = await paths.command(command, tz="Europe/Berlin")
    assert reply.startswith("OK, #1 reminder") and "no time" not in reply


async def test_every_month_from_the_29th_asks_which_day(paths: Paths):
    paths.clock[0] = datetime(2026, 1, 30, 12, 0, tzinfo=UTC)
    with pytest.raises(ToolError, match="today is day 30 of the month, which some months do"):
        await paths.command("/remind every month | rent", tz="Europe/Berlin")
    assert await paths.service.list(KEY.channel, "u1") == []


async def test_a_time_later_in_this_hour_is_set_for_today(paths: Paths):
    """Set at 13:00 in Berlin, '/remind at 13:30' fired the next day at 13:30."""
    reply = await paths.command("/remind at 13:30 call the bank", tz="Europe/Berlin")
    assert "at Fri 2026-11-27 13:30 Europe/Berlin: call the bank" in reply
    reply = await paths.tool(tz="Europe/Berlin", content="tea", time="13:45")
    assert "at Fri 2026-11-27 13:45 Europe/Berlin: tea" in reply
    # today named by its weekday, at a time still ahead: today, not a week on
    reply = await paths.command("/remind friday at 7pm | call mum", tz="Europe/Berlin")
    assert "at Fri 2026-11-27 19:00 Europe/Berlin: call mum" in reply


async def test_a_repeat_says_how_it_repeats_and_how_to_end_it_when_it_fires(paths: Paths):
    """A daily ping said nothing of how to stop it."""
    await paths.command("/remind every day at 14:00 | water the plants", tz="Europe/Berlin")
    await paths.command("/remind in 1 hour | tea", tz="Europe/Berlin")
    paths.clock[0] = datetime(2026, 11, 27, 13, 0, 5, tzinfo=UTC)  # 14:00 in Berlin
    await paths.service._scheduler.fire_due(paths.clock[0])
    fired = sorted([(await paths.service._scheduler._bus.get_outbound()).text for _ in range(2)])
    assert fired == [
        "⏰ Reminder: tea",  # a one-off: as before
        "⏰ Reminder: water the plants (repeats at 14:00 every day ('0 14 * * *');"
        " /cancel 1 ends it)",
    ]


async def test_a_time_given_gets_no_note(paths: Paths):
    reply = await paths.command("/remind monday at 7pm | call mum", tz="Europe/Berlin")
    assert "at Mon 2026-11-30 19:00 Europe/Berlin: call mum" in reply
    assert "no time" not in reply


async def _stored(store: ReminderStore, recurrence: str | None, next_at: datetime) -> Reminder:
    """A reminder as an earlier version left it: ``next_at`` worked out by its rules."""
    return await store.add(
        KEY, "u1", content="x", kind=ReminderKind.REMINDER, fire_at=next_at,
        recurrence=recurrence, timezone="UTC",
    )  # fmt: skip


async def _upgraded(db: Database) -> None:
    """What migration 0021 does to a database an earlier release left: its recurring
    reminders listed to be worked out again (the migration's own INSERT, run again)."""
    (migration,) = (m for m in MIGRATIONS if "reminder_replans" in m)
    await db.execute(migration[migration.index("INSERT INTO") :])


async def test_a_next_run_stored_by_older_rules_is_moved_at_start(db: Database) -> None:
    """Before the fixes, 'every monday' (0 9 * * 1) stored a Tuesday and '0 9 1,15 * 1'
    a Monday that is the 1st or 15th (months away). At start the scheduler moves each to
    today's next run, and leaves alone a run that is right, a one-off and one due now.
    (A year ahead of the real clock: APScheduler's timer, on real time, fires nothing.)"""
    store = ReminderStore(db)
    now = datetime(2027, 11, 26, 12, 0, tzinfo=UTC)  # a Friday
    monday = await _stored(store, "0 9 * * 1", datetime(2027, 11, 30, 9, tzinfo=UTC))
    either = await _stored(store, "0 9 1,15 * 1", datetime(2028, 5, 1, 9, tzinfo=UTC))
    right = await _stored(store, "0 9 * * *", datetime(2027, 11, 27, 9, tzinfo=UTC))
    once = await _stored(store, None, datetime(2028, 1, 3, 9, tzinfo=UTC))
    due = await _stored(store, "0 9 * * 1", datetime(2027, 11, 26, 11, tzinfo=UTC))
    await _upgraded(db)
    scheduler = ReminderScheduler(store, InProcessBus(), clock=lambda: now)
    await scheduler.start()
    try:
        after = {r.id: r.next_fire_at for r in await store.active()}
    finally:
        await scheduler.stop()
    assert after[monday.id] == after[either.id] == datetime(2027, 11, 29, 9, tzinfo=UTC)
    for kept in (right, once, due):
        assert after[kept.id] == kept.next_fire_at
    assert await store.to_replan() == []  # once: the next start reads an empty list


async def test_reminders_this_release_made_are_not_worked_out_again(db: Database) -> None:
    """Only the reminders an upgrade listed: one set by this release is left as set."""
    store = ReminderStore(db)
    weekly = await _stored(store, "0 9 * * 1", datetime(2027, 11, 30, 9, tzinfo=UTC))
    assert await store.to_replan() == []
    assert await replan(store, datetime(2027, 11, 26, 12, tzinfo=UTC)) == 0
    assert (await store.active())[0].next_fire_at == weekly.next_fire_at


async def test_a_daily_run_that_fired_in_the_first_pass_is_not_moved_into_the_second(
    db: Database,
) -> None:
    """A restart during the repeated hour: the daily 01:30 fired at 01:30 EDT and stored
    tomorrow's; worked out again at 01:20 EST it must not come at 01:30 EST too."""
    store = ReminderStore(db)
    first_pass = datetime(2026, 11, 1, 5, 30, tzinfo=UTC)  # 01:30 EDT, New York
    made = await store.add(
        KEY, "u1", content="pills", kind=ReminderKind.REMINDER, fire_at=first_pass,
        recurrence="30 1 * * *", timezone="America/New_York",
    )  # fmt: skip
    tomorrow = datetime(2026, 11, 2, 6, 30, tzinfo=UTC)
    await store.fired(made.id, first_pass, tomorrow)
    await _upgraded(db)
    assert await replan(store, datetime(2026, 11, 1, 6, 20, tzinfo=UTC)) == 0  # 01:20 EST
    stored = await store.get(made.id)
    assert stored is not None and stored.next_fire_at == tomorrow
