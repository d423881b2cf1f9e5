"""A user's new time zone, applied to the reminders they already have.

A repeat is set for a wall-clock time ("every day at 9am"): it moves to the new zone at
the same local time, its next run worked out there. A one-off was set for a moment: it
keeps that instant, and is shown in the new zone from now on. A run already due (being
fired, or waiting for its channel) keeps its time: moving it would skip that run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from bot.errors import ToolError
from bot.reminders.cron import next_occurrence
from bot.reminders.timeparse import zone_label
from bot.store.reminders import Reminder

# (id, the next run as read, the new zone, the next run in it): a row of rezoned_many
Move = tuple[int, datetime, str, datetime]


@dataclass
class Rezoning:
    """What a zone change does to one user's active reminders."""

    repeats: list[Move] = field(default_factory=list)
    one_offs: list[Move] = field(default_factory=list)


def plan(reminders: list[Reminder], tz: str, now: datetime) -> Rezoning:
    """The moves that bring ``reminders`` to ``tz`` (those already in it stay)."""
    moves = Rezoning()
    for reminder in reminders:
        was = reminder.next_fire_at
        if was is None or reminder.timezone == tz:
            continue
        if not reminder.recurrence:
            moves.one_offs.append((reminder.id, was, tz, was))
            continue
        nxt = _next_run(reminder.recurrence, tz, now) if was > now else was
        moves.repeats.append((reminder.id, was, tz, nxt or was))
    return moves


def _next_run(recurrence: str, tz: str, now: datetime) -> datetime | None:
    try:
        return next_occurrence(recurrence, tz, now)
    except ToolError:  # a schedule today's rules refuse: it keeps its stored run
        return None


def said(repeats: int, one_offs: int, tz: str) -> str:
    """The sentence the zone change's answer ends with ("" when nothing moved)."""
    clock = f"{zone_label(tz).rsplit('/', 1)[-1].replace('_', ' ')} time"
    parts = []
    if repeats:
        runs = "repeating reminder now runs" if repeats == 1 else "repeating reminders now run"
        parts.append(f"{repeats} {runs} on {clock}, at the same time of day")
    if one_offs:
        keeps = "reminder keeps its moment" if one_offs == 1 else "reminders keep their moment"
        parts.append(f"{one_offs} one-off {keeps}, now shown in {clock}")
    return f" {'; '.join(parts)}." if parts else ""
