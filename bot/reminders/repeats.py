"""``/remind every ...``: a repeat said in words, as the 5-field cron expression the
reminders table stores (APScheduler's CronTrigger validates and runs it in the user's
zone). A cron expression itself is accepted too. The time of day goes through
:func:`parse_when` (dateparser), so "9am", "21:30" and "8.30pm" all work.
"""

from __future__ import annotations

import re
from datetime import datetime

from bot.errors import ToolError
from bot.reminders.cron import cron_trigger
from bot.reminders.timeparse import parse_when, zone

_DAYS = {"mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6, "sun": 0}
_UNITS = {"minute": 60, "min": 60, "hour": 24}
USAGE = (
    "usage: /remind every <interval | day | weekday | monday... [at <time>]> | <what>, "
    "e.g. '/remind every day at 9am | water', '/remind every 2 hours stretch', "
    "'/remind every monday at 8:30 | standup' or a cron '/remind every 0 9 * * 1-5 | work'"
)


def every(text: str, tz: str, now: datetime) -> str:
    """The cron expression of ``every <text>``; a ToolError when it is none."""
    phrase = " ".join(text.lower().split())
    if len(phrase.split()) == 5 and not re.search(r"[a-z]{4,}", phrase):
        cron_trigger(phrase, tz)
        return phrase
    step = re.fullmatch(r"(?:(\d+) )?(minute|min|hour)s?", phrase)
    if step:
        return _interval(int(step[1] or 1), step[2])
    days, _, at = phrase.partition(" at ")
    minute, hour = _time_of_day(at, tz, now)
    return f"{minute} {hour} * * {_weekdays(days)}"


def _interval(n: int, unit: str) -> str:
    limit = _UNITS[unit]
    if n < 1 or limit % n:
        raise ToolError(f"every {n} {unit}s does not divide the {unit}s of a day; {USAGE}")
    if unit == "hour":
        return f"0 */{n} * * *" if n > 1 else "0 * * * *"
    return f"*/{n} * * * *" if n > 1 else "* * * * *"


def _time_of_day(at: str, tz: str, now: datetime) -> tuple[int, int]:
    """(minute, hour) of "at <time>", or of now when no time is given."""
    local = parse_when(f"at {at}", tz, now) if at.strip() else now  # "at 9" is 09:00
    local = local.astimezone(zone(tz))
    return local.minute, local.hour


def _weekdays(days: str) -> str:
    days = days.strip()
    if days in ("day", "days", "daily"):
        return "*"
    if days in ("weekday", "weekdays"):
        return "1-5"
    if days in ("weekend", "weekends"):
        return "0,6"
    picked = []
    for word in re.split(r"[ ,]+|\band\b", days):
        if word.strip():
            number = _DAYS.get(word.strip()[:3])
            if number is None:
                raise ToolError(f"could not understand 'every {days}'; {USAGE}")
            picked.append(str(number))
    if not picked:
        raise ToolError(USAGE)
    return ",".join(picked)
