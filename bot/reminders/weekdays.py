"""The weekday field of a cron schedule, read as cron reads it.

In cron 0 (and 7) is Sunday and 1 Monday; APScheduler 3 numbers weekdays from Monday
(0 is Monday), so a schedule handed to it as written ran a day late: "0 9 * * 1-5",
the weekdays, fired Tuesday to Saturday. The field is therefore expanded to the days it
names, the cron way, and handed over as names, which both read alike.
"""

from __future__ import annotations

from bot.errors import ToolError

DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")  # cron's order: 0 is Sunday


def weekday_names(field: str) -> str:
    """Cron's weekday field ("1-5", "0,6", "*/2", "mon-fri") as APScheduler's day names."""
    if field in ("*", "?"):
        return "*"
    return ",".join(DAYS[d] for d in sorted(weekday_numbers(field)))


def weekday_numbers(field: str) -> set[int]:
    """The days cron's weekday field names, numbered as cron does (0 is Sunday)."""
    days: set[int] = set()
    for part in field.lower().split(","):
        days |= _part(part)
    return days


def _part(part: str) -> set[int]:
    body, slash, step_text = part.partition("/")
    step = _number(step_text, part) if slash else 1
    if step < 1:
        raise ToolError(f"weekday step '{part}' must be at least 1")
    if body == "*":
        low, high = 0, 6
    elif "-" in body:
        first, last = body.split("-", 1)
        low, high = _day(first, part), _day(last, part)
        if high < low:
            raise ToolError(f"weekday range '{part}' runs backwards; write e.g. 'mon-fri'")
    else:
        low = _day(body, part)
        high = 6 if slash else low  # "1/2": from Monday on, every other day
    return {day % 7 for day in range(low, high + 1, step)}


def _day(token: str, part: str) -> int:
    if token in DAYS:
        return DAYS.index(token)
    day = _number(token, part)
    if not 0 <= day <= 7:
        raise ToolError(f"weekday '{token}' in '{part}' is not 0-7 (0 and 7: Sunday) or a name")
    return day


def _number(token: str, part: str) -> int:
    if not token.isdigit():
        raise ToolError(f"weekday '{part}' is not a day (0-7, or sun..sat)")
    return int(token)
