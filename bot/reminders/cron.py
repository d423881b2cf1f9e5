"""A 5-field cron schedule in the user's zone: validated, and its next run.

APScheduler's CronTrigger runs it; this module holds where cron and APScheduler 3
disagree.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from apscheduler.triggers.cron import CronTrigger

from bot.errors import ToolError
from bot.reminders.timeparse import zone
from bot.reminders.weekdays import weekday_names

# Runs of one schedule in a repeated stretch: one a minute ("* * * * *") over the
# longest (Antarctica/Troll goes back two hours).
MAX_REPEATED_RUNS = 121


def cron_trigger(expr: str, tz_name: str) -> CronTrigger:
    """A validated 5-field cron schedule (minute hour day month weekday) in the user's zone."""
    fields = expr.split()
    if len(fields) != 5:
        raise ToolError(
            f"'{expr}' is not a 5-field cron expression (minute hour day month weekday), "
            "e.g. '0 9 * * *' for every day at 9:00"
        )
    minute, hour, day, month, weekday = fields
    tz = zone(tz_name)
    try:
        return CronTrigger(
            minute=minute,
            hour=hour,
            day=day,
            month=month,
            day_of_week=weekday_names(weekday),  # cron's numbering, not APScheduler's
            timezone=tz,
        )
    except (ValueError, ToolError) as exc:
        raise ToolError(f"invalid cron expression '{expr}': {exc}") from None


def next_occurrence(expr: str, tz_name: str, after: datetime) -> datetime | None:
    """The first run of ``expr`` strictly after ``after`` (aware UTC), or None.

    A local wall-clock time runs once: the night clocks go back, runs in the repeated
    hour's second pass are skipped (CronTrigger matches 01:30 in both passes, so a
    daily 01:30 fired twice).
    """
    trigger = cron_trigger(expr, tz_name)
    nxt = trigger.get_next_fire_time(None, _just_after(after))
    for _ in range(MAX_REPEATED_RUNS):
        if nxt is None or not _second_pass(nxt):
            break
        nxt = trigger.get_next_fire_time(None, _just_after(nxt))
    return nxt.astimezone(UTC) if nxt else None


def _just_after(when: datetime) -> datetime:
    # In UTC: local arithmetic drops the fold and lands back in the first pass.
    return when.astimezone(UTC) + timedelta(microseconds=1)


def _second_pass(when: datetime) -> bool:
    """Whether the local time ``when`` shows was already shown an offset earlier."""
    return when.fold == 1 and when.utcoffset() != when.replace(fold=0).utcoffset()
