"""A time zone as people type it: ``/timezone europe/berlin`` or ``/timezone Berlin``
was refused as "not an IANA time zone; use a name like 'Europe/Berlin'", which reads
as nonsense to someone who wrote just that. The exact name is tried first; then the
same name in any case, then a city (the name's last part, spaces for underscores) of
one zone (old aliases such as America/Indianapolis count as the zone they name).
Anything else is refused with the closest names to pick from. The answer names the
zone set, so a match is never silent."""

from __future__ import annotations

import difflib
from datetime import UTC, datetime
from functools import cache
from zoneinfo import ZoneInfo, available_timezones

from bot.errors import ToolError
from bot.reminders.timeparse import zone

MAX_SUGGESTIONS = 3
CLOSE = 0.86  # difflib's ratio for a suggestion: a typo, not a different city
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
    name = typed.strip()
    try:
        return zone(name)
    except ToolError as refused:
        full, cities = _names()
        wanted = "_".join(name.lower().split())
        matches = [full[wanted]] if wanted in full else cities.get(wanted, [])
        if matches and (found := _one_zone(matches)) is not None:
            return zone(found)
        close = matches or [
            n
            for key in difflib.get_close_matches(wanted, [*full, *cities], MAX_SUGGESTIONS, CLOSE)
            for n in ([full[key]] if key in full else cities[key])
        ]
        if len(wanted) < 4 or not close:  # "PST": no typo of "EST", and no zone either
            raise
        picks = " or ".join(f"'{n}'" for n in sorted(set(close))[:MAX_SUGGESTIONS])
        raise ToolError(f"'{name}' is not an IANA time zone; did you mean {picks}?") from refused
