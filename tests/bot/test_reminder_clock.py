"""Times of day read on the user's wall clock, over the real service, scheduler and SQLite
store with the clock fixed: month ends, zones west of UTC, the nights the clocks change;
the same over the ``create_reminder`` tool."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
import pytest_asyncio

from bot.store.db import Database
from tests.fakes.reminder_paths import ReminderPaths, reminder_paths

NY = "America/New_York"


Clocked = ReminderPaths


@pytest_asyncio.fixture
async def at(db: Database) -> Callable[[datetime], Clocked]:
    """A service, store and command router whose clock stands still at the time given."""
    return lambda now: reminder_paths(db, now)


@pytest.mark.parametrize(
    ("tz", "now", "expected"),
    [
        # Thu 31 Dec 15:00 in Berlin: it was Dec 1 of next year, 11 months late
        ("Europe/Berlin", datetime(2026, 12, 31, 14, 0), "Fri 2027-01-01 09:00"),
        # Sun 28 Feb 15:00 in Tokyo: it was Feb 1, refused as past
        ("Asia/Tokyo", datetime(2027, 2, 28, 6, 0), "Mon 2027-03-01 09:00"),
        ("UTC", datetime(2026, 4, 30, 20, 0), "Fri 2026-05-01 09:00"),
    ],
)
async def test_a_passed_time_of_day_on_a_months_last_day_is_tomorrows(at, tz, now, expected):
    clocked = at(now.replace(tzinfo=UTC))
    assert f"at {expected} {tz}: gym" in await clocked.command("/remind at 9am | gym", tz)
    assert f"at {expected} {tz}: gym" in await clocked.tool(tz, content="gym", time="9am")
    reply = await clocked.command("/remind at 12:00 | call mum", tz)
    assert f"at {expected[:-6]} 12:00 {tz}: call mum" in reply


@pytest.mark.parametrize(
    ("tz", "now"),
    [
        (NY, datetime(2026, 12, 9, 15, 30)),  # Wed 10:30 in New York
        ("America/Los_Angeles", datetime(2026, 12, 9, 23, 0)),  # Wed 15:00
        ("Europe/Berlin", datetime(2026, 12, 9, 9, 30)),  # Wed 10:30
    ],
)
async def test_a_passed_time_of_day_west_of_utc_is_tomorrows(at, tz, now):
    """New York at 10:30: '/remind at 9am' was today's 09:00, refused as past."""
    clocked = at(now.replace(tzinfo=UTC))
    reply = await clocked.command("/remind at 9am | standup", tz)
    assert f"at Thu 2026-12-10 09:00 {tz}: standup" in reply
    reply = await clocked.command("/remind at 8 call bob", tz)
    assert f"at Thu 2026-12-10 08:00 {tz}: call bob" in reply
    reply = await clocked.tool(tz, content="standup", time="at 9am")
    assert f"at Thu 2026-12-10 09:00 {tz}: standup" in reply


@pytest.mark.parametrize(
    ("tz", "now", "nine"),
    [
        # Sat 18:00 in Berlin, the clocks go back that night: it was 08:00
        ("Europe/Berlin", datetime(2026, 10, 24, 16, 0), datetime(2026, 10, 25, 8, 0)),
        ("Europe/London", datetime(2026, 10, 24, 19, 0), datetime(2026, 10, 25, 9, 0)),
        # Sat 12:00 in New York, the clocks go forward that night: it was 10:00
        (NY, datetime(2026, 3, 7, 17, 0), datetime(2026, 3, 8, 13, 0)),
    ],
)
async def test_tomorrow_at_nine_is_nine_across_a_clock_change(at, tz, now, nine):
    clocked = at(now.replace(tzinfo=UTC))
    reply = await clocked.command("/remind tomorrow at 9am | dentist", tz)
    assert "09:00" in reply, reply
    assert (await clocked.latest()).next_fire_at == nine.replace(tzinfo=UTC)
    reply = await clocked.tool(tz, content="dentist", time="in 3 days at 9am")
    assert "09:00" in reply, reply
    reply = await clocked.command("/remind tomorrow 7pm | dinner", tz)
    assert "19:00" in reply, reply


@pytest.mark.parametrize(
    ("tz", "now", "said", "first"),
    [
        # Sun 00:20 EDT, the night 01:30 comes twice: pytz's AmbiguousTimeError escaped
        (NY, datetime(2026, 11, 1, 4, 20), "1:30", datetime(2026, 11, 1, 5, 30)),
        ("Europe/Berlin", datetime(2026, 10, 24, 22, 30), "2:30", datetime(2026, 10, 25, 0, 30)),
    ],
)
async def test_a_time_in_the_repeated_hour_is_its_first_pass(at, tz, now, said, first):
    clocked = at(now.replace(tzinfo=UTC))
    for text in (f"/remind at {said} | pills", f"/remind at {said}am pills"):
        assert f"{said.zfill(5)} {tz}: pills" in await clocked.command(text, tz)
        assert (await clocked.latest()).next_fire_at == first.replace(tzinfo=UTC)
    reply = await clocked.command(f"/remind every day at {said} | pills", tz)
    assert f"'30 {said[0]} * * *'" in reply, reply
    assert (await clocked.latest()).next_fire_at == first.replace(tzinfo=UTC)
    reply = await clocked.tool(tz, content="pills", time=f"at {said}am")
    assert reply.startswith("Created"), reply


@pytest.mark.parametrize(
    ("tz", "now"),
    [(NY, datetime(2026, 11, 1, 5, 10)), ("Europe/Berlin", datetime(2026, 10, 25, 0, 15))],
)
async def test_in_ten_minutes_in_the_repeated_hour_is_ten_minutes(at, tz, now):
    """01:10 EDT, the first pass: it was stored 70 minutes ahead."""
    now = now.replace(tzinfo=UTC)
    clocked = at(now)
    await clocked.command("/remind in 10 minutes | oven off", tz)
    assert (await clocked.latest()).next_fire_at == now + timedelta(minutes=10)


@pytest.mark.parametrize(
    ("tz", "now"),
    [("Europe/Berlin", datetime(2026, 3, 28, 12, 0)), (NY, datetime(2026, 3, 7, 17, 0))],
)
async def test_every_day_at_a_time_the_clocks_skip_keeps_that_time(at, tz, now):
    """Set the day before the clocks go forward, 'every day at 2:30' was 03:30 for good."""
    clocked = at(now.replace(tzinfo=UTC))
    reply = await clocked.command("/remind every day at 2:30 | feed the baby", tz)
    assert "('30 2 * * *')" in reply, reply
    reply = await clocked.command("/remind every weekday at 2:15am | night shift", tz)
    assert "('15 2 * * 1-5')" in reply, reply
