"""``/remind every ...``: a repeat said in words, as the 5-field cron expression the
reminders table stores (APScheduler's CronTrigger validates and runs it in the user's
zone). A cron expression itself is accepted too. The time of day goes through
:func:`wall_clock` (dateparser), so "9am", "21:30" and "8.30pm" all work; a repeat that
names days and no time of day is at :data:`DEFAULT_TIME`, as a one-off reminder for a
named day is (not at the minute it was set: "every friday" set at 23:40 is no evening
alarm anyone asked for). Weekdays are whole names, plurals or the usual abbreviations:
a three-letter prefix read "every month" as every Monday.
"""

from __future__ import annotations

import re
from datetime import datetime

from bot.errors import ToolError
from bot.reminders.cron import cron_trigger
from bot.reminders.timeparse import DEFAULT_TIME, trimmed, wall_clock, zone

_DAY_NAMES = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
_ABBREVIATIONS = {"tues": 2, "weds": 3, "thur": 4, "thurs": 4}
# cron's numbering (0 is Sunday): each name, its plural and its three-letter abbreviation
_DAYS = {
    **{form: n for n, name in enumerate(_DAY_NAMES) for form in (name, name + "s", name[:3])},
    **_ABBREVIATIONS,
}
_WEEKLY = ("week", "weekly")
_MONTHLY = ("month", "monthly")
_UNITS = {"minute": 60, "min": 60, "hour": 24}
USAGE = (
    "usage: /remind every <interval | day | weekday | week | month | monday... [at <time>]>"
    " | <what>, "
    "e.g. '/remind every day at 9am | water', '/remind every 2 hours stretch', "
    "'/remind every monday at 8:30 | standup' or a cron '/remind every 0 9 * * 1-5 | work'"
)


_STEP = re.compile(r"(?:(\d+) )?(minute|min|hour)s?")


def _phrase(text: str) -> str:
    """Lower case, single spaces, no separator after it ("every friday: water")."""
    return " ".join(trimmed(text).lower().split())


def _is_cron(phrase: str) -> bool:
    return len(phrase.split()) == 5 and not re.search(r"[a-z]{4,}", phrase)


def every(text: str, tz: str, now: datetime) -> str:
    """The cron expression of ``every <text>``; a ToolError when it is none."""
    phrase = _phrase(text)
    if _is_cron(phrase):
        cron_trigger(phrase, tz)
        return phrase
    step = _STEP.fullmatch(phrase)
    if step:
        return _interval(int(step[1] or 1), step[2])
    days, _, at = phrase.partition(" at ")
    minute, hour = _time_of_day(at, tz, now)
    if days in _MONTHLY:
        return f"{minute} {hour} {_day_of_month(tz, now)} * *"
    return f"{minute} {hour} * * {_weekdays(days, tz, now)}"


def names_no_time(text: str) -> bool:
    """Whether ``every <text>`` repeats on days and gives no time of day (so it is at
    :data:`DEFAULT_TIME`, which a confirmation says)."""
    phrase = _phrase(text)
    return not (_is_cron(phrase) or _STEP.fullmatch(phrase) or " at " in f" {phrase} ")


def _interval(n: int, unit: str) -> str:
    limit = _UNITS[unit]
    if n < 1 or limit % n:
        raise ToolError(f"every {n} {unit}s does not divide the {unit}s of a day; {USAGE}")
    if unit == "hour":
        return f"0 */{n} * * *" if n > 1 else "0 * * * *"
    return f"*/{n} * * * *" if n > 1 else "* * * * *"


def _time_of_day(at: str, tz: str, now: datetime) -> tuple[int, int]:
    """(minute, hour) of "at <time>", or :data:`DEFAULT_TIME` when none is given."""
    if not at.strip():
        return DEFAULT_TIME.minute, DEFAULT_TIME.hour
    # "at 9" is 09:00; the clock's reading, so "2:30" stays 02:30 set on the day before
    # the clocks skip it (read off that instant it was 03:30, every day)
    local = wall_clock(f"at {at}", tz, now)
    return local.minute, local.hour


def _day_of_month(tz: str, now: datetime) -> int:
    """Today's day of the month in the user's zone: "every month" repeats on it. From
    the 29th on some months have no such day, and cron would skip them; the user says
    which day instead."""
    day = now.astimezone(zone(tz)).day
    if day > 28:
        raise ToolError(
            f"today is day {day} of the month, which some months do not have; say which "
            "day, e.g. '/remind every 0 9 1 * * | rent' for the 1st at 9:00"
        )
    return day


def _weekdays(days: str, tz: str, now: datetime) -> str:
    if days in _WEEKLY:  # on today's weekday, in the user's zone
        return str(int(now.astimezone(zone(tz)).strftime("%w")))
    if days in ("day", "days", "daily"):
        return "*"
    if days in ("weekday", "weekdays"):
        return "1-5"
    if days in ("weekend", "weekends"):
        return "0,6"
    picked = []
    for word in re.split(r"[ ,]+|\band\b", days):
        if word.strip():
            number = _DAYS.get(word.strip())
            if number is None:
                raise ToolError(f"could not understand 'every {days}'; {USAGE}")
            picked.append(str(number))
    if not picked:
        raise ToolError(USAGE)
    return ",".join(picked)
