"""A time zone as people type it: ``/timezone europe/berlin`` or ``/timezone Berlin``
was refused as "not an IANA time zone; use a name like 'Europe/Berlin'", which reads
as nonsense to someone who wrote just that. The exact name is tried first; then the
same name in any case, then a city (the name's last part, spaces for underscores) of
one zone (old aliases such as America/Indianapolis count as the zone they name), then a
city named first with its country or region after it ("Berlin, Germany", "London UK").
Anything else is refused with the closest names to pick from. The answer names the
zone set, so a match is never silent.

Two things people type are not what tzdata means by them. An offset: "GMT+1" matched
tzdata's Etc/GMT+1, which is POSIX-signed, one hour *behind* UTC, so a user in Berlin
typing it was two hours off; "UTC+2" and "+02:00" were refused. An offset now means
what it says (the Etc/GMT zone of the opposite sign, a whole number of hours; a
half-hour one is answered with the places on it). An abbreviation: "PST" was refused,
and tzdata's EST and MST are fixed offsets (links to Panama and Phoenix) that skip the
summer time of New York and Denver, which is what people typing them mean; the common
ones name the place whose clock they are, and an ambiguous one ("IST") asks which."""

from __future__ import annotations

import difflib
import re
from datetime import UTC, datetime, timedelta
from functools import cache
from zoneinfo import ZoneInfo, available_timezones

from bot.errors import ToolError
from bot.reminders.timeparse import trimmed, zone, zone_label

MAX_SUGGESTIONS = 3
# Far longer than any zone, city and country ("America/Argentina/ComodRivadavia" is 32):
# the place lookup is quadratic in the words, and 96,000 characters took seconds.
MAX_ZONE_CHARS = 100
CLOSE = 0.86  # difflib's ratio for a suggestion: a typo, not a different city
# A clock's usual abbreviation -> the zone of the places that use it, summer time included
# (not the two-letter PT, ET...: those are also countries' codes, Portugal's, Ethiopia's).
ABBREVIATIONS = {
    **dict.fromkeys(("pst", "pdt"), "America/Los_Angeles"),
    **dict.fromkeys(("mst", "mdt"), "America/Denver"),
    "cdt": "America/Chicago",
    **dict.fromkeys(("est", "edt"), "America/New_York"),
    **dict.fromkeys(("akst", "akdt"), "America/Anchorage"),
    "bst": "Europe/London",
    "cest": "Europe/Berlin",
    "eest": "Europe/Athens",
    "msk": "Europe/Moscow",
    "jst": "Asia/Tokyo",
    "kst": "Asia/Seoul",
    "hkt": "Asia/Hong_Kong",
    "sgt": "Asia/Singapore",
    **dict.fromkeys(("aest", "aedt"), "Australia/Sydney"),
    **dict.fromkeys(("nzst", "nzdt"), "Pacific/Auckland"),
}
AMBIGUOUS = {
    "ist": ("Asia/Kolkata", "Asia/Jerusalem", "Europe/Dublin"),
    "cst": ("America/Chicago", "Asia/Shanghai", "America/Havana"),
}
# "UTC+2", "GMT-5", "+02:00", "utc +5:30" (the whole text; a sign is required)
_OFFSET = re.compile(r"(?:utc|gmt)?\s*([+-\u2212])\s*(\d{1,2})(?:[:.]?(\d{2}))?", re.I)
# Instants at which two names must agree to be one zone (an alias and its target).
_PROBES = [datetime(year, month, 1, tzinfo=UTC) for year in (1990, 2005, 2025) for month in (1, 7)]


@cache
def _names() -> tuple[dict[str, str], dict[str, list[str]]]:
    """Lower-case full names -> the name; cities -> the names ending in them (read once)."""
    full: dict[str, str] = {}
    cities: dict[str, list[str]] = {}
    for name in sorted(available_timezones()):
        full[name.lower()] = name
        if "/" in name:
            cities.setdefault(name.rsplit("/", 1)[-1].lower(), []).append(name)
    return full, cities


def _one_zone(names: list[str]) -> str | None:
    """The name to use when ``names`` are one zone (the longest: tzdata's own name,
    America/Indiana/Indianapolis, is longer than its alias); None when they differ."""
    offsets = {tuple(p.astimezone(ZoneInfo(n)).utcoffset() for p in _PROBES) for n in names}
    return max(names, key=len) if len(offsets) == 1 else None


def user_zone(typed: str) -> ZoneInfo:
    """The zone ``typed`` names (see the module docstring), or a ToolError naming the
    closest ones."""
    name = trimmed(typed).rstrip(".")
    if len(name) > MAX_ZONE_CHARS:
        raise ToolError(
            f"that is too long for a time zone (over {MAX_ZONE_CHARS} characters); "
            "use a name like 'Europe/Berlin' or a city"
        )
    known = _abbreviation(name) or _offset(name)
    if known is not None:
        return known
    try:
        return zone(name)
    except ToolError as refused:
        full, cities = _names()
        wanted = "_".join(name.lower().split())
        found, matches = _by_place(wanted)
        if found is not None:
            return zone(found)
        if (leading := _leading_place(name)) is not None:  # "Berlin, Germany"
            return zone(leading)
        close = matches or [
            n
            for key in difflib.get_close_matches(wanted, [*full, *cities], MAX_SUGGESTIONS, CLOSE)
            for n in ([full[key]] if key in full else cities[key])
        ]
        if len(wanted) < 4 or not close:  # "PST": no typo of "EST", and no zone either
            raise
        picks = " or ".join(f"'{n}'" for n in sorted(set(close))[:MAX_SUGGESTIONS])
        raise ToolError(f"'{name}' is not an IANA time zone; did you mean {picks}?") from refused


def _by_place(wanted: str) -> tuple[str | None, list[str]]:
    """The zone a full name or a city (lower case, underscores) is, and every name it
    matched (several cities of one name that are different zones: no zone)."""
    full, cities = _names()
    matches = [full[wanted]] if wanted in full else cities.get(wanted, [])
    return (_one_zone(matches) if matches else None), matches


def _leading_place(name: str) -> str | None:
    """The zone of a city named first, a country or region after it: "Berlin, Germany",
    "london uk", "New York USA"; the longest leading run of words that is one."""
    words = name.replace(",", " , ").split()
    if "," in words:
        words = words[: words.index(",")]
    for n in range(len(words), 0, -1):
        found, _ = _by_place("_".join(words[:n]).lower())
        if found is not None:
            return found
    return None


def _abbreviation(name: str) -> ZoneInfo | None:
    """The zone an abbreviation stands for; a ToolError when it stands for several."""
    key = name.lower()
    if key in AMBIGUOUS:
        picks = ", ".join(f"'{n}'" for n in AMBIGUOUS[key])
        raise ToolError(f"'{name}' is used for several time zones; say which: {picks}")
    return zone(ABBREVIATIONS[key]) if key in ABBREVIATIONS else None


def _offset(name: str) -> ZoneInfo | None:
    """A fixed offset from UTC as the Etc/GMT zone that has it (tzdata signs those the
    POSIX way: Etc/GMT-2 is UTC+2); None when ``name`` is no offset."""
    found = _OFFSET.fullmatch(name)
    if found is None:
        return None
    sign = -1 if found[1] in "-\u2212" else 1
    hours, minutes = int(found[2]), int(found[3] or 0)
    if minutes >= 60 or not -12 <= sign * hours <= 14:
        raise ToolError(f"'{name}' is no offset from UTC; they run from UTC-12 to UTC+14")
    if minutes:
        offset = sign * timedelta(hours=hours, minutes=minutes)
        places = ", ".join(f"'{n}'" for n in _zones_at(offset)) or "a city's zone"
        raise ToolError(f"'{name}' has no zone of its own; say the place, e.g. {places}")
    return zone("UTC" if hours == 0 else f"Etc/GMT{-sign * hours:+d}")


def _zones_at(offset: timedelta) -> list[str]:
    """A few zones whose clocks are at ``offset`` now."""
    now = datetime.now(UTC)
    return sorted(
        n
        for n in _names()[0].values()
        if "/" in n
        and not n.startswith("Etc/")
        and now.astimezone(ZoneInfo(n)).utcoffset() == offset
    )[:MAX_SUGGESTIONS]


def describe_zone(name: str) -> str:
    """A zone's name as a person reads it: Etc/GMT-2 is "UTC+2 (Etc/GMT-2, ...)"."""
    label = zone_label(name)
    return name if label == name else f"{label} ({name}, a fixed offset: no summer time)"
