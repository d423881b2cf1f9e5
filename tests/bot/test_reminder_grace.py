"""``[reminders] missed_grace_h = 0``: a reminder or follow-up firing on time is sent (its
wake-up is always a little late, and every one was 'Missed ... while the bot was
offline'); one due while the bot was down is still reported as missed."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from bot.agent.toolbox import ToolContext, ToolServices
from bot.bus.base import InProcessBus
from bot.handlers.commands import CommandRouter
from bot.messages import ChatKey, InboundMessage
from bot.reminders.commands import register_reminder_commands
from bot.reminders.scheduler import ReminderScheduler
from bot.reminders.service import ReminderService
from bot.store.db import Database
from bot.store.reminders import ReminderStatus, ReminderStore, UserSettingsStore
from tools.reminders import ScheduleFollowupTool

KEY = ChatKey("test", "c1")
NOW = datetime(2026, 12, 8, 10, 0, tzinfo=UTC)


async def _remind(router: CommandRouter, text: str) -> str:
    msg = InboundMessage(KEY, "u1", text)
    found = router.match(msg)
    assert found is not None
    command, args = found
    return await command.func(msg, args)


async def test_with_no_grace_a_fire_on_time_is_sent_and_one_after_downtime_missed(
    db: Database,
) -> None:
    """missed_grace_h = 0 made every fire 'Missed ... while the bot was offline' and no
    follow-up ever ran."""
    clock = [NOW]
    store, bus = ReminderStore(db), InProcessBus()
    scheduler = ReminderScheduler(store, bus, clock=lambda: clock[0], grace=timedelta(0))
    service = ReminderService(
        store, UserSettingsStore(db), scheduler, default_timezone="UTC", clock=lambda: clock[0]
    )
    router = CommandRouter()
    register_reminder_commands(router, service, clock=lambda: clock[0])
    await _remind(router, "/remind in 10 minutes | stretch")
    ctx = ToolContext(KEY, "u1", services=ToolServices(reminders=service))
    await ScheduleFollowupTool().execute(ctx, prompt="check the weather", time="in 10 minutes")
    await _remind(router, "/remind in 20 minutes | tea")
    clock[0] = NOW + timedelta(minutes=10, milliseconds=50)  # as a timer's wake-up is
    await scheduler.fire_due(clock[0])
    assert (await asyncio.wait_for(bus.get_outbound(), 5)).text == "⏰ Reminder: stretch"
    assert (await asyncio.wait_for(bus.get_inbound(), 5)).text == "check the weather"
    for reminder_id in (1, 2):
        fired = await store.get(reminder_id)
        assert fired is not None and fired.status is ReminderStatus.DONE
    # down from 10:15 to 12:00: the one due at 10:20 is reported, not sent late
    clock[0] = NOW + timedelta(hours=2)
    await scheduler.fire_due(clock[0])
    assert (await asyncio.wait_for(bus.get_outbound(), 5)).text.startswith("⏰ Missed reminder")
    missed = await store.get(3)
    assert missed is not None and missed.status is ReminderStatus.MISSED
