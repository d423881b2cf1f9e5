"""What ``/remind`` and the ``create_reminder`` tool store and say, over the real service
and SQLite store, with the clock fixed."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
import pytest_asyncio

from bot.agent.toolbox import ToolContext, ToolServices
from bot.bus.base import InProcessBus
from bot.handlers.commands import CommandRouter
from bot.messages import ChatKey, InboundMessage
from bot.reminders.commands import register_reminder_commands
from bot.reminders.scheduler import ReminderScheduler
from bot.reminders.service import ReminderService
from bot.store.db import Database
from bot.store.reminders import Reminder, ReminderStore, UserSettingsStore
from tools.reminders import CreateReminderTool

KEY = ChatKey("test", "c1")
FRIDAY = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)  # Friday 2026-11-27, 13:00 in Berlin


@dataclass
class Paths:
    service: ReminderService
    store: ReminderStore
    clock: list[datetime]
    router: CommandRouter

    async def command(self, text: str, tz: str = "UTC") -> str:
        await self.service.set_timezone(KEY.channel, "u1", tz)
        msg = InboundMessage(KEY, "u1", text)
        found = self.router.match(msg)
        assert found is not None
        command, args = found
        return await command.func(msg, args)

    async def tool(self, tz: str = "UTC", **arguments: str) -> str:
        await self.service.set_timezone(KEY.channel, "u1", tz)
        ctx = ToolContext(KEY, "u1", services=ToolServices(reminders=self.service))
        return await CreateReminderTool().execute(ctx, **arguments)

    async def latest(self) -> Reminder:
        (*_, newest) = await self.service.list(KEY.channel, "u1")
        return newest


@pytest_asyncio.fixture
async def paths(db: Database) -> AsyncIterator[Paths]:
    clock = [FRIDAY]
    now: Callable[[], datetime] = lambda: clock[0]  # noqa: E731
    store = ReminderStore(db)
    scheduler = ReminderScheduler(store, InProcessBus(), clock=now)
    service = ReminderService(
        store, UserSettingsStore(db), scheduler, default_timezone="UTC", clock=now
    )
    router = CommandRouter()
    register_reminder_commands(router, service, clock=now)
    yield Paths(service, store, clock, router)


@pytest.mark.parametrize("how", ["command", "tool"])
async def test_a_pasted_cron_with_a_day_and_a_weekday_runs_on_either(paths: Paths, how: str):
    """'0 9 1,15 * 1' first ran on 2027-02-01, the next Monday that is the 1st or 15th."""
    if how == "command":
        reply = await paths.command("/remind every 0 9 1,15 * 1 | pay the rent")
    else:
        reply = await paths.tool(content="pay the rent", time="now", recurrence="0 9 1,15 * 1")
    assert "Mon 2026-11-30 09:00" in reply
    reminder = await paths.latest()
    assert reminder.next_fire_at == datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
