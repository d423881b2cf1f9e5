"""The composition root: the one place that builds every part, by constructor injection.

Only this module (and the channel registry) names concrete channels and tools. Parts
receive what they need when they are built; nothing is poked into an object after
construction and no part finds another through a global. :class:`bot.daemon.Daemon`
then only starts and stops what was built here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from bot.agent.llm.client import LLMClient
from bot.agent.runner import AgentRunner, ChatModel
from bot.agent.toolbox import ToolServices
from bot.bus.durable import DurableBus
from bot.config import Settings
from bot.config.channels import allow_lists, enabled_channels
from bot.daemon import Daemon
from bot.delivery import Delivery
from bot.dispatcher.dispatcher import Dispatcher
from bot.dispatcher.middlewares import AccessControl, SizeGuard
from bot.dispatcher.screen import JournalScreen
from bot.handlers.commands import CommandRouter
from bot.handlers.session_commands import new_session_command
from bot.handlers.turn import TurnHandler
from bot.http import SharedHttp
from bot.messages import InboundMessage
from bot.ops.bindings import bind_metrics
from bot.ops.housekeeping import Housekeeping
from bot.ops.metrics import CountingToolBox, PrometheusMetrics
from bot.ops.signals import stop_on_signals
from bot.ops.supervisor import Supervisor
from bot.ops.web import WebServer
from bot.reminders.commands import register_reminder_commands
from bot.reminders.scheduler import ReminderScheduler
from bot.reminders.service import ReminderService
from bot.store.base import Storage
from bot.store.db import Database
from bot.store.sqlite import sqlite_storage
from bot.workspaces.folders import Workspaces, template_text
from channels.base import Channel, ChannelContext, ProvidesRoutes, Route
from channels.files import ChannelFiles
from channels.registry import SPECS
from tools.loader import build_registry
from tools.weather import OpenMeteoWeather, weather_command

log = logging.getLogger(__name__)


def build_model(settings: Settings) -> LLMClient:
    llm = settings.llm
    return LLMClient(
        llm.model,
        api_base=llm.api_base,
        api_key=llm.api_key.get_secret_value(),
        fallback_models=llm.fallback_models,
        timeout_s=llm.timeout_s,
        max_retries=llm.max_retries,
    )


ChannelsFactory = Callable[[ChannelContext], Sequence[Channel]]


def platform_channels(settings: Settings, ctx: ChannelContext | None = None) -> list[Channel]:
    """Every platform channel whose section turns it on, built by its package's factory."""
    ctx = ctx or ChannelContext(state=_NoState(), data_dir=settings.data_dir)
    return [spec.factory(section, ctx) for spec, section in enabled_channels(settings)]


class _NoState:
    """State for channels built without a daemon store (e.g. listing what is configured)."""

    async def get(self, key: str, default: str | None = None) -> str | None:
        return default

    async def set(self, key: str, value: str) -> None:
        return None


def build_daemon(
    settings: Settings,
    channels: Sequence[Channel] | ChannelsFactory | None = None,
    *,
    local: Sequence[Channel] = (),
    model: ChatModel | None = None,
    serve_web: bool | None = None,
    stores: Callable[[Database], Storage] = sqlite_storage,
) -> Daemon:
    """Every part of a daemon.

    ``channels`` None means ``local`` ones (the terminal) plus every configured
    platform; a factory gets the :class:`ChannelContext` whose state (polling offsets)
    lives in this daemon's store. ``stores`` builds the repositories over the database.
    """
    metrics = PrometheusMetrics()
    db = Database(settings.data_dir / "bot.db")
    storage = stores(db)
    ctx = ChannelContext(state=storage.kv, data_dir=settings.data_dir)
    if channels is None:
        channels = [*local, *platform_channels(settings, ctx)]
    elif callable(channels):
        channels = list(channels(ctx))
    by_name = {c.name: c for c in channels}
    sessions, outbox, inbox = storage.sessions, storage.outbox, storage.inbox
    bus = DurableBus(inbox, outbox)
    workspaces = Workspaces(settings.data_dir / "workspaces")
    http = SharedHttp()
    llm = build_model(settings) if model is None else None
    if llm is not None:
        llm.on_attempt = metrics.model_call
    reminder_store = storage.reminders
    scheduler = ReminderScheduler(
        reminder_store, bus, grace=timedelta(hours=settings.reminders.missed_grace_h)
    )
    reminders = ReminderService(
        reminder_store,
        storage.user_settings,
        scheduler,
        default_timezone=settings.timezone,
        max_active_per_user=settings.reminders.max_active_per_user,
    )

    async def user_timezone(msg: InboundMessage) -> str:
        return await reminders.user_timezone(msg.key.channel, msg.user_id)

    weather = OpenMeteoWeather(settings.weather, http)
    commands = CommandRouter()
    register_reminder_commands(commands, reminders)
    commands.register(weather_command(weather, user_timezone))
    commands.register(new_session_command(sessions))
    tools = build_registry()
    chat_model: ChatModel = model if model is not None else _require(llm)
    runner = AgentRunner(
        chat_model,
        CountingToolBox(tools, metrics),
        sessions,
        workspaces,
        timezone=user_timezone,
        max_steps=settings.llm.max_steps,
        context=settings.context,
        model_name=settings.llm.model,
        services=ToolServices(reminders=reminders, weather=weather, files=ChannelFiles(by_name)),
    )
    turns = TurnHandler(
        bus=bus, commands=commands, runner=runner, channels=by_name, metrics=metrics
    )
    access = AccessControl(
        bus,
        allow_from=allow_lists(settings),
        admins=settings.admins,
        trusted_channels=[c.name for c in channels if c.trusted],
    )
    dispatcher = Dispatcher(
        bus,
        turns.handle,
        max_concurrent=settings.agent.max_concurrent_chats,
        idle_s=settings.agent.worker_idle_s,
        filters=[access, SizeGuard(bus, settings.agent.max_message_chars)],
    )
    delivery = Delivery(
        outbox, by_name, max_concurrent=settings.agent.max_concurrent_chats, metrics=metrics
    )
    bind_metrics(
        metrics, scheduler=scheduler, dispatcher=dispatcher, outbox=outbox, channels=by_name
    )
    housekeeping = Housekeeping(inbox, outbox, runner.offload, settings.retention)
    daemon = Daemon(
        settings=settings,
        db=db,
        bus=bus,
        outbox=outbox,
        sessions=sessions,
        workspaces=workspaces,
        http=http,
        scheduler=scheduler,
        reminders=reminders,
        commands=commands,
        runner=runner,
        dispatcher=dispatcher,
        delivery=delivery,
        channels=by_name,
        inbound=JournalScreen(access.allowed, settings.agent.max_message_chars, bus.put_inbound),
        metrics=metrics,
        model=chat_model,
        tools=tools,
        housekeeping=housekeeping,
        supervisor=Supervisor(metrics),
        web=None,
        warmup=llm.start_warmup if llm is not None else lambda: None,
    )
    web = settings.web
    if web.enabled if serve_web is None else serve_web:
        daemon.web = WebServer(
            web.host,
            web.port,
            health=daemon.health,
            metrics=metrics.render,
            routes=channel_routes(channels),
        )
    return daemon


def channel_routes(channels: Sequence[Channel]) -> list[Route]:
    """The webhook routes channels mount on the shared web app."""
    return [r for c in channels if isinstance(c, ProvidesRoutes) for r in c.routes()]


def _require(llm: LLMClient | None) -> LLMClient:
    assert llm is not None
    return llm


async def run_daemon(settings: Settings, *, terminal: bool) -> int:
    from channels.cli import CLIChannel

    cli = CLIChannel(interactive=True) if terminal else None
    daemon = build_daemon(settings, local=[cli] if cli else [])
    stop_on_signals(daemon.request_stop)
    await daemon.start()
    if cli is not None:
        await _first(daemon.wait_stopped(), cli.finished.wait())
    else:
        await daemon.wait_stopped()
    await daemon.stop()
    return 0


async def run_chat(settings: Settings) -> int:
    from channels.cli import CLIChannel

    cli = CLIChannel()
    # No /healthz here: a terminal session next to a running `bot run` must not clash.
    daemon = build_daemon(settings, local=[cli], serve_web=False)
    stop_on_signals(daemon.request_stop)
    await daemon.start()
    await _first(daemon.wait_stopped(), cli.finished.wait())
    await daemon.stop()
    return 0


async def _first(*aws: Coroutine[Any, Any, Any]) -> None:
    tasks = [asyncio.ensure_future(a) for a in aws]
    _, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()


def example_config() -> str:
    """The commented bot.toml ``bot init`` writes: the core keys, then each platform's."""
    base = template_text("bot.example.toml")
    head, sep, tail = base.partition("[web]")
    sections = "\n".join(spec.example for spec in SPECS if spec.example)
    return f"{head}{sections}\n{sep}{tail}"


def write_example_config(path: Path) -> None:
    path.write_text(example_config(), encoding="utf-8")
