"""Turning what people write ("in 10 minutes", "tomorrow at 9am", ISO 8601) into an
aware UTC datetime in the user's zone (cron schedules are :mod:`bot.reminders.cron`).

dateparser handles the natural-language phrases (well kept, many languages); ISO 8601
goes through the standard library first so exact times never depend on heuristics.
A day named without a time of day ("friday", "december 24", "2026-12-11") is at
:data:`DEFAULT_TIME`: dateparser made it 00:00, the night before the day the user meant.

dateparser reads a phrase on the user's wall clock (naive), and the zone is attached
here as the ISO path attaches it: fold 0 in the hour the clocks go back, a time they
skip as if they had not gone forward yet (so it is that much later). A time of day alone
is today's or tomorrow's, worked out here; a phrase counted from now ("in 10 minutes")
is added to the instant now, so the repeated hour does not count twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
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
# A time of day and nothing else: "at 09:00" (as at_times writes it), "9am", "21:30", "noon".
_CLOCK = re.compile(
    r"(?:at\s+)?(?:\d{1,2}(?:[:.]\d{2})?\s*(?:[ap]\.?m\.?)?|noon|midday|midnight)", re.I
)
_NUDGE = timedelta(hours=1)  # a phrase counted from now moves with the clock by this much


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
    when = _read(text, zone(tz_name), now)
    return When(when.at.astimezone(UTC), when.default_time)


def wall_clock(text: str, tz_name: str, now: datetime) -> datetime:
    """The time the user gave as their clock reads it (aware, in their zone): a repeat
    takes its time of day from it. 02:30 on the night the clocks skip it stays 02:30
    here; read off the instant it was 03:30, and "every day at 2:30" 03:30 for good."""
    tz = zone(tz_name)
    return _read(text, tz, now).at.astimezone(tz)


def _read(text: str, tz: ZoneInfo, now: datetime) -> When:
    """The time the user gave, aware; a wall-clock time keeps its fields as said (fold 0
    in the repeated hour, a time the clocks skip as if they had not gone forward yet)."""
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
    return when


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
    rest, own_zone = _own_zone(phrase)
    where: tzinfo = own_zone or tz  # "at 15:00 UTC" is read on UTC's clock
    base = now.astimezone(where).replace(tzinfo=None)
    # dateparser reads wall-clock times only: its own zone handling (pytz) raised on the
    # night the clocks go back and mixed UTC offsets into "today" and "tomorrow".
    settings: dict[str, object] = {
        "RETURN_AS_TIMEZONE_AWARE": False,
        "PREFER_DATES_FROM": "future",
        "RELATIVE_BASE": base,
        "RETURN_TIME_AS_PERIOD": True,  # the period says how much of the date was named
        "PARSERS": ["relative-time", "absolute-time"],  # no digits read as a Unix time
    }
    if _CLOCK.fullmatch(rest.strip()):
        at = _today_or_tomorrow(phrase, settings, base, where, now)
        if at is not None:
            return When(at)
    found = _date_data(phrase, settings)
    if found.date_obj is None:
        return None
    # A month or a year alone ("may", "2027") gets today's day filled in; relative
    # phrases ("in 2 months") still parse with the day required.
    vague = found.period in ("month", "year")
    if vague and _date_data(phrase, {**settings, "REQUIRE_PARTS": ["day"]}).date_obj is None:
        raise ToolError(f"'{text}' names no day; say e.g. 'May 5' or 'in 2 months'")
    wall: datetime = found.date_obj
    if _counted_from_now(phrase, settings, base, wall):  # "in 10 minutes", "tomorrow":
        return When((now + (wall - base)).astimezone(tz))  # elapsed time, in any hour
    if found.period == "day" and wall.time() == time(0):  # "friday": a day, no time of day
        return When(datetime.combine(wall.date(), DEFAULT_TIME, tzinfo=where), True)
    if found.period == "time" and wall.date() > base.date():
        wall = _still_ahead_today(phrase, settings, base, wall)
    return When(wall.replace(tzinfo=where))  # fold=0, as the ISO path: see module doc


def _counted_from_now(
    phrase: str, settings: dict[str, object], base: datetime, wall: datetime
) -> bool:
    """Whether the phrase is an amount from now: its time moves with the clock. A named
    time has no microseconds, one counted from now keeps now's (no second parse)."""
    if wall.microsecond != base.microsecond:
        return False
    later = _date_data(phrase, {**settings, "RELATIVE_BASE": base + _NUDGE}).date_obj
    return bool(later == wall + _NUDGE)


def _own_zone(phrase: str) -> tuple[str, tzinfo | None]:
    """The phrase without a zone it names ("at 3pm EST"), and that zone."""
    from dateparser.timezone_parser import pop_tz_offset_from_string

    rest: str
    own: tzinfo | None
    rest, own = pop_tz_offset_from_string(phrase)
    return rest, own


def _today_or_tomorrow(
    phrase: str, settings: dict[str, object], base: datetime, where: tzinfo, now: datetime
) -> datetime | None:
    """A time of day alone ("at 9am", "21:30") is today's while it is ahead, else
    tomorrow's. dateparser's preference for the future put a passed one on the 1st of
    the month on a month's last day (Dec 1 of next year on Dec 31). None: the phrase is
    no time of day after all ("1.15" is January 15)."""
    today: datetime | None = _date_data(
        phrase, {**settings, "PREFER_DATES_FROM": "current_period"}
    ).date_obj
    if today is None or today.date() != base.date():
        return None
    first = today.replace(tzinfo=where)
    for at in (first, first.replace(fold=1)):  # 01:30 comes twice as the clocks go back
        if at > now:
            return at
    return datetime.combine(today.date() + timedelta(days=1), today.time(), tzinfo=where)


def _still_ahead_today(
    phrase: str, settings: dict[str, object], base: datetime, wall: datetime
) -> datetime:
    """dateparser's preference for the future moves a named time to a later day: "friday
    5pm" said on a Friday at 14:00 was next week's. Read for the current period instead,
    that reading is kept when it is still ahead and sooner; one already passed stays
    the later one."""
    current = _date_data(phrase, {**settings, "PREFER_DATES_FROM": "current_period"}).date_obj
    if current is None:
        return wall
    return current if base < current < wall else wall


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
