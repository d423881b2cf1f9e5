"""What the composition root's ``ready:`` half (:mod:`bot.app`) hands its agent half
(:mod:`bot.app_agent`, built after ``ready:``).

Its own module so that neither half imports the other's module at the top: the root
imports the agent half only when a turn first needs it, and the agent half needs only
this shape.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.admin.auth import AdminAuth
    from bot.agent.governor.offload import ToolResultOffload
    from bot.agent.llm.response import ChatModel
    from bot.bus.durable import DurableBus
    from bot.config import Settings
    from bot.daemon import Daemon
    from bot.handlers.commands import CommandRouter
    from bot.handlers.pairing import PairingDecisions
    from bot.http import SharedHttp
    from bot.media.files import MediaFiles
    from bot.messages import ChatKey, InboundMessage
    from bot.ops.activity import Activity
    from bot.ops.metrics import PrometheusMetrics
    from bot.reminders.service import ReminderService
    from bot.store.base import Storage
    from bot.workspaces.folders import Workspaces
    from bot.workspaces.personas import Personas
    from bot.workspaces.routing import WorkspaceLookup, WorkspaceRouter
    from channels.base import Channel


@dataclass(frozen=True)
class ReadyParts:
    """What :func:`bot.app.build_daemon` made for ``ready:`` that the agent side is
    wired to."""

    settings: Settings
    storage: Storage
    bus: DurableBus
    workspaces: Workspaces
    http: SharedHttp
    reminders: ReminderService
    commands: CommandRouter
    channels: Mapping[str, Channel]
    metrics: PrometheusMetrics
    offload: ToolResultOffload
    media: MediaFiles  # files users sent, kept under data/media/
    routing: WorkspaceRouter
    turn_workspace: WorkspaceLookup
    is_admin: Callable[[InboundMessage], bool]
    model: ChatModel | None  # None: the configured litellm model
    # The line that starts the answer to a message said while the bot was away.
    late_note: Callable[[InboundMessage], str] = lambda _msg: ""
    # Among replicas: whether this one still runs the chat (its partition's lease).
    runs: Callable[[ChatKey], bool] = lambda _key: True
    # Ends the turn answering a message, as /stop does (a person stopped its stream).
    end_turn: Callable[[InboundMessage], None] = lambda _msg: None
    # An earlier reply to the chat is still being delivered (Delivery.delivering): the
    # next answer's streamed preview is not posted above it.
    delivering: Callable[[ChatKey], bool] = lambda _key: False


@dataclass(frozen=True)
class AdminParts:
    """What :func:`bot.app.build_daemon` hands :mod:`bot.app_admin` (imported only when
    ``[admin] enabled``): the built daemon and the services its chat commands use."""

    daemon: Daemon
    storage: Storage
    auth: AdminAuth
    personas: Personas
    pairing: PairingDecisions
    activity: Activity
