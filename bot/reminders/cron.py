"""A 5-field cron schedule in the user's zone: validated, and its next run.

APScheduler's CronTrigger runs it; this module holds where cron and APScheduler 3
disagree.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.combining import OrTrigger
from apscheduler.triggers.cron import CronTrigger

from bot.errors import ToolError
from bot.reminders.timeparse import zone
from bot.reminders.weekdays import weekday_names

# Runs of one schedule in a repeated stretch: one a minute ("* * * * *") over the
# longest (Antarctica/Troll goes back two hours).
MAX_REPEATED_RUNS = 121


def cron_trigger(expr: str, tz_name: str) -> BaseTrigger:
    """A validated 5-field cron schedule (minute hour day month weekday) in the user's zone.

    When both the day of the month and the weekday are restricted, cron runs on a day
    matching either ("0 9 1,15 * 1": the 1st, the 15th and every Monday); APScheduler 3
    requires both, which ran such a schedule a few times a year. So it becomes the
    earlier of two triggers, one per field. A field starting with '*' ("*", "*/2") or
    "?" leaves the other alone, as in Vixie cron and cronie: then both must match.
    """
    fields = expr.split()
    if len(fields) != 5:
        raise ToolError(
            f"'{expr}' is not a 5-field cron expression (minute hour day month weekday), "
            "e.g. '0 9 * * *' for every day at 9:00"
        )
    minute, hour, day, month, weekday = fields
    tz = zone(tz_name)
    try:
        days = weekday_names(weekday)  # cron's numbering, not APScheduler's
        day = "*" if day == "?" else day
        if _restricted(day) and _restricted(weekday):
            return OrTrigger(
                [
                    CronTrigger(minute=minute, hour=hour, day=day, month=month, timezone=tz),
                    CronTrigger(
                        minute=minute, hour=hour, month=month, day_of_week=days, timezone=tz
                    ),
                ]
            )
        return CronTrigger(
            minute=minute, hour=hour, day=day, month=month, day_of_week=days, timezone=tz
        )
    except (ValueError, ToolError) as exc:
        raise ToolError(f"invalid cron expression '{expr}': {exc}") from None


def _restricted(field: str) -> bool:
    return not field.startswith("*") and field != "?"


def next_occurrence(
    expr: str, tz_name: str, after: datetime, *, since: datetime | None = None
) -> datetime | None:
    """The first run of ``expr`` strictly after ``after`` (aware UTC), or None.

    The night clocks go back, the wall clock shows an hour (two in Antarctica/Troll)
    twice, and CronTrigger matches a time in both passes. What a user expects:

    - A schedule on every hour (hour field '*' or '*/n': hourly, every 30 minutes) is
      about elapsed time: it runs in both passes, so an hourly reminder runs every real
      hour (it skipped the second 01:00: two hours without one).
    - A schedule on hours of the day (daily 01:30) runs once per wall-clock time: in the
      first pass, or in the second when the first came before ``since`` (when the
      schedule started, or the run this one follows; ``after`` by default). So a daily
      01:30 runs once that night, and one set at 01:45 or during the second pass runs
      at the second 01:30, not a day later.
    """
    trigger = cron_trigger(expr, tz_name)
    every_hour = expr.split()[1].startswith("*")
    start = after if since is None else since
    nxt = trigger.get_next_fire_time(None, _just_after(after))
    for _ in range(MAX_REPEATED_RUNS):
        if nxt is None or every_hour or not _repeats_a_run(nxt, start):
            break
        nxt = trigger.get_next_fire_time(None, _just_after(nxt))
    return nxt.astimezone(UTC) if nxt else None


def _repeats_a_run(when: datetime, since: datetime) -> bool:
    """Whether ``when`` is the second pass of a wall-clock time whose first pass was a
    run of the schedule (at or after ``since``)."""
    return _second_pass(when) and when.replace(fold=0).astimezone(UTC) >= since


def _just_after(when: datetime) -> datetime:
    # In UTC: local arithmetic drops the fold and lands back in the first pass.
    return when.astimezone(UTC) + timedelta(microseconds=1)


def _second_pass(when: datetime) -> bool:
    """Whether the local time ``when`` shows was already shown an offset earlier."""
    return when.fold == 1 and when.utcoffset() != when.replace(fold=0).utcoffset()
