"""Reminders: every active one by user and chat, the next fire time in the user's zone,
cancel; through :class:`~bot.reminders.service.ReminderService`, as ``/cancel``."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from bot.admin.site import PAGE_SIZE, PageRoute, View
from bot.errors import ToolError
from bot.reminders.schedule import describe as describe_repeat
from bot.reminders.service import describe
from bot.reminders.timeparse import format_local
from bot.store.reminders import Reminder
from bot.text import row_number

PATH = "/admin/reminders"


@dataclass(frozen=True, slots=True)
class Row:
    reminder: Reminder
    when: str  # the next fire time in its owner's zone
    repeats: str = ""  # its schedule in words and as cron, when it repeats


async def reminders(view: View) -> web.StreamResponse:
    service = view.services.reminders
    found = await service.page(PAGE_SIZE + 1, view.offset)
    rows = []
    for r in found[:PAGE_SIZE]:
        tz = await service.user_timezone(r.key.channel, r.user_id)
        when = format_local(r.next_fire_at, tz) if r.next_fire_at else "-"
        rows.append(Row(r, when, describe_repeat(r.recurrence) if r.recurrence else ""))
    return view.render("reminders.html", rows=rows, more=len(found) > PAGE_SIZE)


async def cancel(view: View) -> web.StreamResponse:
    ident = view.form.get("id", "")
    number = row_number(ident)
    reminder = await view.services.reminders.get(number) if number is not None else None
    if reminder is None:
        raise ToolError(f"there is no active reminder #{ident}")
    # The owner's own cancel, on their behalf: the same checks and the same effect.
    cancelled = await view.services.reminders.cancel(
        reminder.key.channel, reminder.user_id, reminder.id
    )
    return view.done(PATH, f"Cancelled {describe(cancelled)}")


ROUTES = [PageRoute("GET", PATH, reminders), PageRoute("POST", f"{PATH}/cancel", cancel, PATH)]
