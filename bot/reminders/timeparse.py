"""Turning what people write ("in 10 minutes", "tomorrow at 9am", ISO 8601) into an
aware UTC datetime in the user's zone (cron schedules are :mod:`bot.reminders.cron`).

dateparser handles the natural-language phrases (well kept, many languages); ISO 8601
goes through the standard library first so exact times never depend on heuristics.
A day named without a time of day ("friday", "december 24", "2026-12-11") is at
:data:`DEFAULT_TIME`: dateparser made it 00:00, the night before the day the user meant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.errors import ToolError
from bot.reminders.phrases import at_times, check_numbers, spoken_amounts, with_its_month

MAX_AHEAD = timedelta(days=3652)  # ten years
# No real time phrase is longer; dateparser's cost grows with the text and blocks the loop.
MAX_WHEN_CHARS = 200
PAST_TOLERANCE = timedelta(seconds=5)
DEFAULT_TIME = time(9, 0)  # of a day named with no time of day, in the user's zone
_POSIX_OFFSET = re.compile(r"Etc/GMT([+-]\d+)")
_TRAILING = ",:;-\u2013\u2014"  # a separator typed after the time, before the text


@dataclass(frozen=True, slots=True)
class When:
    """A time the user gave (aware UTC); ``default_time``: they named a day and no time
    of day, so it is at :data:`DEFAULT_TIME` (a confirmation says so)."""

    at: datetime
    default_time: bool = False


def zone(name: str) -> ZoneInfo:
    """A ZoneInfo for an IANA name, or a ToolError that says what is accepted."""
    try:
        if not name or name.strip() != name or name.startswith("/"):
            raise ValueError(name)
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ToolError(
            f"'{name}' is not an IANA time zone; use a name like 'Europe/Berlin', "
            "'America/New_York' or 'Asia/Shanghai'"
        ) from None


def parse_when(text: str, tz_name: str, now: datetime) -> datetime:
    """Parse a time the user gave; returns aware UTC. Raises ToolError when unusable."""
    return read_when(text, tz_name, now).at


def read_when(text: str, tz_name: str, now: datetime) -> When:
    """:func:`parse_when`, saying whether the time of day was taken by default."""
    tz = zone(tz_name)
    phrase = trimmed(text)
    if not phrase:
        raise ToolError("no time given; say e.g. 'in 10 minutes' or '2026-12-01T09:00'")
    if len(phrase) > MAX_WHEN_CHARS:
        raise ToolError(
            f"the time is {len(phrase):,} characters long; give it in at most "
            f"{MAX_WHEN_CHARS} characters, e.g. 'tomorrow at 9am' or '2026-12-01T09:00'"
        )
    when = _parse_iso(phrase, tz) or _parse_phrase(phrase, tz, now)
    if when is None:
        raise ToolError(
            f"could not understand the time '{phrase}'; try 'in 10 minutes', "
            "'tomorrow at 9am', 'next Monday 8:30' or ISO 8601 like '2026-12-01T09:00'"
        )
    return When(when.at.astimezone(UTC), when.default_time)


def trimmed(text: str) -> str:
    """``text`` without a separator typed after it: "tomorrow at 9: standup" splits as
    "tomorrow at 9:", whose colon hid the time of day (it was 'tomorrow', now's time)."""
    return text.strip().rstrip(_TRAILING).rstrip()


def check_future(when: datetime, now: datetime, tz_name: str) -> None:
    if when < now - PAST_TOLERANCE:
        raise ToolError(f"{format_local(when, tz_name)} is in the past; pick a future time")
    if when - now > MAX_AHEAD:
        raise ToolError("that is more than 10 years away; pick a nearer time")


def _parse_iso(text: str, tz: ZoneInfo) -> When | None:
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if _is_date(text):  # "2026-12-11": a day, no time of day
        return When(datetime.combine(parsed.date(), DEFAULT_TIME, tzinfo=tz), True)
    return When(parsed if parsed.tzinfo else parsed.replace(tzinfo=tz))


def _is_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _parse_phrase(text: str, tz: ZoneInfo, now: datetime) -> When | None:
    named = with_its_month(text, now.astimezone(tz).date())  # "on the 15th": which 15th
    for candidate in named[:-1]:
        found = _parse_phrase(candidate, tz, now)
        if found is not None and found.at > now:
            return found
    if named:
        return _parse_phrase(named[-1], tz, now)
    phrase = at_times(spoken_amounts(text))  # "at 8" is 08:00, never August
    check_numbers(phrase)  # "in 5" is refused, never May
    base = now.astimezone(tz).replace(tzinfo=None)
    settings: dict[str, object] = {
        "TIMEZONE": tz.key,
        "RETURN_AS_TIMEZONE_AWARE": True,
        "PREFER_DATES_FROM": "future",
        "RELATIVE_BASE": base,
        "RETURN_TIME_AS_PERIOD": True,  # the period says how much of the date was named
        "PARSERS": ["relative-time", "absolute-time"],  # no digits read as a Unix time
    }
    found = _date_data(phrase, settings)
    if found.date_obj is None:
        return None
    # A month or a year alone ("may", "2027") gets today's day filled in; relative
    # phrases ("in 2 months") still parse with the day required.
    vague = found.period in ("month", "year")
    if vague and _date_data(phrase, {**settings, "REQUIRE_PARTS": ["day"]}).date_obj is None:
        raise ToolError(f"'{text}' names no day; say e.g. 'May 5' or 'in 2 months'")
    when: datetime = found.date_obj
    if _names_a_day_only(found, phrase, settings, base):
        return When(datetime.combine(when.date(), DEFAULT_TIME, tzinfo=tz), True)
    if found.period == "time" and when.date() > base.date():
        return When(_still_ahead_today(phrase, settings, base, when))
    return When(when)


def _still_ahead_today(
    phrase: str, settings: dict[str, object], base: datetime, when: datetime
) -> datetime:
    """dateparser's preference for the future moves a time of day in the current hour to
    a later day: "at 14:30" said at 14:10 was tomorrow's 14:30. Read for the current
    period instead ("at 14:30" today, "friday 5pm" this week's), that reading is kept when
    it is still ahead and sooner; a time already passed ("at 14:05") stays tomorrow's."""
    current = _date_data(phrase, {**settings, "PREFER_DATES_FROM": "current_period"}).date_obj
    if current is None:
        return when
    wall = current.replace(tzinfo=None)
    return current if base < wall < when.replace(tzinfo=None) else when


def _names_a_day_only(found: Any, phrase: str, settings: dict[str, object], base: datetime) -> bool:
    """Whether dateparser read a day and no time of day: "friday" is that day at 00:00,
    where a day counted from now ("tomorrow", "in 2 days") keeps the time of now."""
    if found.period != "day" or found.date_obj.time() != time(0):
        return False
    if base.time() != time(0):
        return True
    # At 00:00 sharp both read 00:00: a day counted from now moves with the clock.
    later = _date_data(phrase, {**settings, "RELATIVE_BASE": base + timedelta(hours=1)})
    return later.date_obj is not None and later.date_obj.time() == time(0)


def _date_data(phrase: str, settings: dict[str, object]) -> Any:
    from dateparser.date import DateDataParser  # ~0.2 s to import: only when needed

    return DateDataParser(languages=["en"], settings=settings).get_date_data(phrase)


def format_local(when: datetime, tz_name: str) -> str:
    """How users see a time: their local wall clock and the zone's name."""
    local = when.astimezone(ZoneInfo(tz_name))
    return f"{local:%a %Y-%m-%d %H:%M} {zone_label(tz_name)}"


def zone_label(name: str) -> str:
    """A zone's name as people read it: tzdata's Etc/GMT-2 is UTC+2 (POSIX signs)."""
    found = _POSIX_OFFSET.fullmatch(name)
    return f"UTC{-int(found[1]):+d}" if found else name


def format_delay(delta: timedelta) -> str:
    """'2 h 5 min', '3 d 4 h', '45 s'."""
    seconds = int(delta.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    if minutes:
        return f"{minutes} min"
    return f"{secs} s"
