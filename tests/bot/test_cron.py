"""Cron schedules as cron runs them, where APScheduler 3 differs: a day of the month OR a
weekday when both are restricted, and the hour clocks go back."""

from __future__ import annotations

from datetime import UTC, date, datetime

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
