"""The real reminder service, scheduler, SQLite store and command router with a clock the
test sets, and the two ways a user sets a reminder: ``/remind`` and the tool."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

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


@dataclass
class ReminderPaths:
    service: ReminderService
    store: ReminderStore
    clock: list[datetime]  # clock[0] is now; a test moves it
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


def reminder_paths(db: Database, now: datetime) -> ReminderPaths:
    """The parts over ``db``, their clock standing at ``now`` until the test moves it."""
    clock = [now]
    read: Callable[[], datetime] = lambda: clock[0]  # noqa: E731
    store = ReminderStore(db)
    scheduler = ReminderScheduler(store, InProcessBus(), clock=read)
    service = ReminderService(
        store, UserSettingsStore(db), scheduler, default_timezone="UTC", clock=read
    )
    router = CommandRouter()
    register_reminder_commands(router, service, clock=read)
    return ReminderPaths(service, store, clock, router)
