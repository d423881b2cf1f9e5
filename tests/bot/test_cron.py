"""Cron schedules as cron runs them, where APScheduler 3 differs: a day of the month OR a
weekday when both are restricted, and the hour clocks go back."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from bot.reminders.cron import next_occurrence

FRIDAY = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)  # Friday 2026-11-27


def _runs(expr: str, start: datetime, n: int, tz: str = "UTC") -> list[date]:
    when, days = start, []
    for _ in range(n):
        nxt = next_occurrence(expr, tz, when)
        assert nxt is not None and nxt > when
        days.append(nxt.date())
        when = nxt
    return days


@pytest.mark.parametrize(
    ("expr", "days"),
    [
        # the 1st, the 15th and every Monday (APScheduler alone: only a Monday that is
        # the 1st or the 15th, next 2027-02-01)
        (
            "0 9 1,15 * 1",
            ["11-30", "12-01", "12-07", "12-14", "12-15", "12-21", "12-28", "01-01", "01-04"],
        ),
        # the 31st or a Friday: November has no 31st, December's is a Thursday
        (
            "0 9 31 * 5",
            ["12-04", "12-11", "12-18", "12-25", "12-31", "01-01", "01-08"],
        ),
        # the month still narrows both: February 13th or February's Fridays
        ("0 9 13 2 fri", ["02-05", "02-12", "02-13", "02-19", "02-26", "02-04"]),
        # the last day of the month (28-31) or a Sunday
        ("0 9 28-31 * 0", ["11-28", "11-29", "11-30", "12-06", "12-13", "12-20", "12-27"]),
    ],
)
def test_a_day_of_the_month_or_a_weekday_when_both_are_restricted(expr, days):
    got = [f"{d:%m-%d}" for d in _runs(expr, FRIDAY, len(days))]
    assert got == days


@pytest.mark.parametrize(
    ("expr", "days"),
    [
        ("0 9 * * 1", ["11-30", "12-07", "12-14"]),  # '*': only the weekday counts
        ("0 9 1,15 * *", ["12-01", "12-15", "01-01"]),
        ("0 9 1,15 * ?", ["12-01", "12-15", "01-01"]),
        # a field starting with '*' is unrestricted to cron (Vixie cron, cronie): both
        # must match, so Mondays on an odd day
        ("0 9 */2 * 1", ["12-07", "12-21", "01-11"]),
        ("0 9 1 * */2", ["12-01", "04-01", "05-01"]),
    ],
)
def test_an_unrestricted_field_leaves_the_other_alone(expr, days):
    got = [f"{d:%m-%d}" for d in _runs(expr, FRIDAY, len(days))]
    assert got == days


def test_the_or_holds_in_the_users_zone_at_the_month_end():
    """Late on the 30th in Berlin is the 1st already: the 1st's run is 08:00 UTC."""
    start = datetime(2026, 11, 30, 22, 30, tzinfo=UTC)  # 23:30 Monday, Berlin
    first = next_occurrence("0 9 1,15 * 1", "Europe/Berlin", start)
    assert first == datetime(2026, 12, 1, 8, 0, tzinfo=UTC)  # Tuesday the 1st, 09:00 CET


NY = "America/New_York"  # 2026-11-01: 02:00 EDT (06:00Z) is 01:00 EST again
BERLIN = "Europe/Berlin"  # 2026-10-25: 03:00 CEST (01:00Z) is 02:00 CET again


def _utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.mark.parametrize(
    ("tz", "expr", "start", "runs"),
    [
        # the wall clock shows 01:00 twice; an hourly reminder runs every real hour
        # (it skipped 01:00 EST: two hours between 01:00 EDT and 02:00 EST)
        (NY, "0 * * * *", _utc(2026, 11, 1, 3, 30), [4, 5, 6, 7, 8]),
        (BERLIN, "0 * * * *", _utc(2026, 10, 24, 22, 30), [23, 0, 1, 2, 3]),
        (NY, "30 * * * *", _utc(2026, 11, 1, 4, 0), [4.5, 5.5, 6.5, 7.5]),
        (NY, "*/30 * * * *", _utc(2026, 11, 1, 4, 50), [5, 5.5, 6, 6.5, 7]),
        # every two hours: 02:00 CEST and 02:00 CET both come (there is no even hour
        # between them to keep the two-hour spacing)
        (BERLIN, "0 */2 * * *", _utc(2026, 10, 24, 21, 30), [22, 0, 1, 3, 5]),
    ],
)
def test_a_schedule_on_every_hour_runs_in_both_passes_of_the_repeated_hour(tz, expr, start, runs):
    when, got = start, []
    for _ in runs:
        nxt = next_occurrence(expr, tz, when)
        assert nxt is not None
        got.append(nxt.hour + nxt.minute / 60)
        when = nxt
    assert got == runs


LORD_HOWE = "Australia/Lord_Howe"  # goes back half an hour: hourly is 90 minutes once
SPACED = [
    (tz, expr)
    for tz in (NY, BERLIN, LORD_HOWE, "Antarctica/Troll")  # Troll goes back two hours
    for expr in ("0 * * * *", "*/30 * * * *", "*/5 * * * *", "* * * * *")
    if not (tz == LORD_HOWE and expr == "0 * * * *")
]


@pytest.mark.parametrize(("tz", "expr"), SPACED)
def test_a_sub_hourly_schedule_keeps_its_spacing_in_real_time_when_clocks_go_back(tz, expr):
    step = {"0": 60, "*/30": 30, "*/5": 5, "*": 1}[expr.split()[0]]
    start = {  # a few hours before each zone's clocks go back in 2026
        NY: _utc(2026, 11, 1, 3, 0),
        BERLIN: _utc(2026, 10, 24, 22, 0),
        LORD_HOWE: _utc(2026, 4, 4, 13, 0),
        "Antarctica/Troll": _utc(2026, 10, 24, 22, 0),
    }[tz]
    when = start
    while when < start + timedelta(hours=5):
        nxt = next_occurrence(expr, tz, when)
        assert nxt is not None
        assert nxt - when == timedelta(minutes=step), (when, nxt)
        when = nxt


@pytest.mark.parametrize(
    ("created", "fires"),
    [
        (_utc(2026, 11, 1, 5, 20), _utc(2026, 11, 1, 5, 30)),  # 01:20 EDT: 01:30 EDT
        # 01:45 EDT and 01:10 EST: 01:30 is still to come on the wall clock, at 01:30
        # EST (it waited for 01:30 the next day)
        (_utc(2026, 11, 1, 5, 45), _utc(2026, 11, 1, 6, 30)),
        (_utc(2026, 11, 1, 6, 10), _utc(2026, 11, 1, 6, 30)),
        (_utc(2026, 11, 1, 6, 40), _utc(2026, 11, 2, 6, 30)),  # 01:40 EST: tomorrow
    ],
)
def test_a_daily_time_set_during_the_repeated_hour_comes_at_the_next_wall_clock_time(
    created, fires
):
    first = next_occurrence("30 1 * * *", NY, created)
    assert first == fires
    # and it runs once that night, whichever pass it ran in
    assert next_occurrence("30 1 * * *", NY, first) - first >= timedelta(hours=24)


def test_a_late_run_of_a_daily_time_does_not_run_again_in_the_second_pass():
    """The 01:30 EDT run, fired at 01:10 EST (the daemon was down), stood for that night's
    01:30: the next is tomorrow's, not 01:30 EST twenty minutes later."""
    due, now = _utc(2026, 11, 1, 5, 30), _utc(2026, 11, 1, 6, 10)
    assert next_occurrence("30 1 * * *", NY, now, since=due) == _utc(2026, 11, 2, 6, 30)
