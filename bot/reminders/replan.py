"""Stored next runs brought up to today's schedule rules, once at start.

A recurring reminder keeps its next run, worked out when it was set or last fired, and
reads its schedule anew at every fire. When the rules change, that one stored run still
follows the old ones: before cron weekdays were counted from Sunday an ``every monday``
stored a Tuesday, and before a day of the month OR a weekday was honoured a
``0 9 1,15 * 1`` stored a day months away. The migration that comes with such a change
lists the recurring reminders of that time (``reminder_replans``); at the next start
each is worked out again, and one that now comes earlier (and is still ahead) is moved,
unless it changed meanwhile (another replica fired or cancelled it). Then the list is
emptied: a start normally reads one empty table.
"""

from __future__ import annotations

import logging
from datetime import datetime

from bot.errors import ToolError
from bot.reminders.cron import next_occurrence
from bot.store.base import Reminders
from bot.store.reminders import Reminder

log = logging.getLogger(__name__)


def earlier_run(reminder: Reminder, now: datetime) -> datetime | None:
    """The reminder's next run by today's rules, when it comes before the stored one."""
    stored = reminder.next_fire_at
    if not reminder.recurrence or stored is None or stored <= now:
        return None  # one-off, or already due: it fires as it is
    since = reminder.last_fired_at or reminder.created_at  # the run it follows
    try:
        found = next_occurrence(reminder.recurrence, reminder.timezone, now, since=since)
    except ToolError:  # a schedule today's rules refuse: left as it was stored
        return None
    return found if found is not None and now < found < stored else None


async def replan(store: Reminders, now: datetime) -> int:
    """Move every listed next run that today's rules put earlier; how many moved."""
    listed = await store.to_replan()
    if not listed:
        return 0
    moves = []
    for reminder in listed:
        found = earlier_run(reminder, now)
        if found is not None:
            assert reminder.next_fire_at is not None
            moves.append((reminder.id, reminder.next_fire_at, found))
    moved = await store.moved_many(moves) if moves else 0
    await store.replanned()
    log.info(
        "%d of %d recurring reminders of an earlier release moved to their next run by"
        " today's rules",
        moved,
        len(listed),
    )
    return moved
