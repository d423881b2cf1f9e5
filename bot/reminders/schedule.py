"""A repeat's schedule in words, as a person reads it: "at 09:00 on Fridays".

The reminders table keeps a 5-field cron expression (bot/reminders/repeats.py makes one
from "every friday"), and a reply or a listing that only quoted it ("repeats '0 9 * * 5'")
asked people to read cron. The shapes ``/remind every`` writes (a time of day on every
day, some weekdays or one day of the month; every N minutes or hours) are said in
words; any other expression someone typed is theirs to read, and stays quoted beside it.

Why not cron-descriptor, which describes any expression: its 2.x wheels install a
top-level ``tools`` package that lands in our ``tools`` namespace (the tool loader then
imported its scripts and the daemon failed to start), and 1.4 reads a day of the month
given with a weekday as both, where cron (and bot/reminders/cron.py) runs either.
"""

from __future__ import annotations

import re

from bot.errors import ToolError
from bot.reminders.weekdays import weekday_numbers

_DAY_NAMES = ("Sundays", "Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays")
_NUMBER = re.compile(r"\d{1,2}")


def in_words(cron: str) -> str | None:
    """``cron`` said in words ("at 09:00 on Fridays"), or None for a shape not covered."""
    fields = cron.split()
    if len(fields) != 5 or fields[3] != "*":
        return None
    minute, hour, day, _, weekday = fields
    if hour == "*" or hour.startswith("*/"):
        return _interval(minute, hour, day, weekday)
    if not (_NUMBER.fullmatch(minute) and _NUMBER.fullmatch(hour)):
        return None
    at = f"at {int(hour):02d}:{int(minute):02d}"
    days = _days(day, weekday)
    return f"{at} {days}" if days else None


def _interval(minute: str, hour: str, day: str, weekday: str) -> str | None:
    """ "* * * * *", "*/15 * * * *", "0 * * * *", "0 */2 * * *"; None for other shapes."""
    if (day, weekday) != ("*", "*"):
        return None
    if hour == "*" and minute in ("*", "0"):
        return "every minute" if minute == "*" else "every hour"
    field, unit = (minute, "minute") if hour == "*" else (hour, "hour")
    if unit == "hour" and minute != "0":
        return None
    step = field.removeprefix("*/")
    if step == field or not step.isdigit() or int(step) < 1:
        return None
    return f"every {unit}" if int(step) == 1 else f"every {int(step)} {unit}s"


def _days(day: str, weekday: str) -> str | None:
    if day == "*" and weekday == "*":
        return "every day"
    if weekday == "*":
        return f"on day {int(day)} of each month" if _NUMBER.fullmatch(day) else None
    if day != "*":
        return None
    try:
        numbers = weekday_numbers(weekday)
    except ToolError:
        return None
    if numbers == {1, 2, 3, 4, 5}:
        return "on weekdays"
    if numbers == {0, 6}:
        return "at weekends"
    names = [_DAY_NAMES[n] for n in sorted(numbers, key=lambda n: (n + 6) % 7)]  # Monday first
    return "on " + ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1]


def describe(cron: str) -> str:
    """How a listing shows a repeat: its words and the expression, or the expression."""
    words = in_words(cron)
    return f"{words} ('{cron}')" if words else f"'{cron}'"
