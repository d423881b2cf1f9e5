"""What the admin page works through: the same services the chat commands use.

Built by the composition root (:mod:`bot.app_admin`); nothing here is a second code
path. The agent side (skills, memory, MCP servers) is built after ``ready:``, so it is
reached through ``agent`` when a page needs it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.admin.auth import AdminAuth, LoginLimiter
    from bot.config import Settings
    from bot.daemon import AgentSide
    from bot.handlers.pairing import PairingDecisions
    from bot.ops.activity import Activity
    from bot.ops.web import Health
    from bot.reminders.service import ReminderService
    from bot.store.base import Sessions
    from bot.workspaces.folders import Workspaces
    from bot.workspaces.personas import Personas


@dataclass(frozen=True, slots=True)
class Queues:
    """Work waiting: messages not yet taken by a chat worker, replies not yet sent."""

    inbound: int
    outbound: int


@dataclass(frozen=True)
class AdminServices:
    settings: Settings
    version: str
    auth: AdminAuth
    limiter: LoginLimiter
    base_url: str  # where people open the page (links and the Secure cookie follow it)
    health: Callable[[], Awaitable[Health]]
    queues: Callable[[], Awaitable[Queues]]
    activity: Activity
    folders: Workspaces
    personas: Personas
    reminders: ReminderService
    pairing: PairingDecisions
    allow_lists: Mapping[str, Sequence[str]]
    sessions: Sessions
    agent: Callable[[], AgentSide]

    @property
    def secure(self) -> bool:
        return self.base_url.startswith("https://")
