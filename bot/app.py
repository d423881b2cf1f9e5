"""The composition root: the one place that builds every part, by constructor injection.

Only this module (and the channel registry) names concrete channels and tools. Parts
receive what they need when they are built; nothing is poked into an object after
construction and no part finds another through a global. :class:`bot.daemon.Daemon`
then only starts and stops what was built here.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
from collections.abc import Callable, Coroutine, Sequence
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.admin.auth import AdminAuth, base_url
from bot.admin.command import admin_link_command
from bot.agent.governor.offload import ToolResultOffload
from bot.agent.llm.setup_executor import install as install_setup_executor
from bot.app_parts import AdminParts, ReadyParts
from bot.bus.durable import DurableBus
from bot.cluster.base import Cluster, SingleProcess
from bot.config import Settings
from bot.config.channels import allow_lists, enabled_channels, secret_values
from bot.daemon import AgentSide, Daemon, LazyAgent
from bot.delivery import Delivery
from bot.dispatcher.backlog import Backlog
from bot.dispatcher.dispatcher import Dispatcher
from bot.dispatcher.middlewares import AccessControl, SizeGuard
from bot.dispatcher.ownership import ChatOwnership
from bot.dispatcher.pairing import Pairing
from bot.dispatcher.ratelimit import RateLimit, TokenBuckets
from bot.dispatcher.screen import JournalScreen
from bot.dispatcher.stops import TurnStops
from bot.handlers.commands import CommandRouter
from bot.handlers.pairing import PairingDecisions, register_pairing_commands
from bot.handlers.session_commands import new_session_command
from bot.http import SharedHttp
from bot.media.files import MediaFiles
from bot.messages import InboundMessage
from bot.ops import startup
from bot.ops.bindings import bind_metrics
from bot.ops.checks import Check
from bot.ops.housekeeping import Housekeeping
from bot.ops.metrics import PrometheusMetrics
from bot.ops.redaction import MIN_SECRET, protect_logs, url_secrets
from bot.ops.signals import stop_on_signals
from bot.ops.status import live_status
from bot.ops.supervisor import Supervisor
from bot.ops.web import WebServer
from bot.reminders.commands import register_reminder_commands
from bot.reminders.scheduler import ReminderScheduler
from bot.reminders.service import ReminderService
from bot.store.base import Access, Storage
from bot.store.db import Database
from bot.store.location import is_postgres, storage_for
from bot.store.sqlite import sqlite_storage
from bot.workspaces.admins import WorkspaceAdmins
from bot.workspaces.commands import WorkspaceCommands
from bot.workspaces.folders import Workspaces, template_text
from bot.workspaces.personas import Personas
from bot.workspaces.routing import WorkspaceLookup, WorkspaceRouter
from channels.base import (
    CatchesUp,
    CatchUpWindow,
    Channel,
    ChannelContext,
    ProvidesRoutes,
    ReceivesAlone,
    Route,
)
from channels.registry import SPECS

if TYPE_CHECKING:
    from bot.agent.llm.response import ChatModel
    from channels.cli import CLIChannel

log = logging.getLogger(__name__)


ChannelsFactory = Callable[[ChannelContext], Sequence[Channel]]


def platform_channels(settings: Settings, ctx: ChannelContext | None = None) -> list[Channel]:
    """Every platform channel whose section turns it on, built by its package's factory."""
    ctx = ctx or ChannelContext(state=_NoState(), data_dir=settings.data_dir)
    return [spec.factory(section, ctx) for spec, section in enabled_channels(settings)]


class _NoState:
    """State for channels built without a daemon store (e.g. listing what is configured)."""

    async def get(self, key: str, default: str | None = None) -> str | None:
        return default

    async def set(self, key: str, value: str, *, keep_for: timedelta | None = None) -> None:
        return None

    async def delete(self, key: str) -> None:
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
    """Every part of a daemon; the agent side (:mod:`bot.app_agent`) when first needed.

    ``channels`` None means ``local`` ones (the terminal) plus every configured
    platform; a factory gets the :class:`ChannelContext` whose state (polling offsets)
    lives in this daemon's store. ``stores`` builds the repositories over a SQLite
    database (``[store] url`` names PostgreSQL or SQLite).
    """
    _protect_logs(settings)
    metrics = PrometheusMetrics()
    url = settings.store.url.get_secret_value()
    storage = storage_for(
        url, settings.data_dir, stores, max_connections=settings.store.max_connections
    )
    shared = is_postgres(url)  # replicas may share it: see bot/cluster
    channels = _channels(settings, storage, channels, local, standby=shared)
    by_name = {c.name: c for c in channels}
    cluster = _replica(settings, url, channels) if shared else SingleProcess()
    # Shared: a message journaled here for a chat another replica runs wakes that one.
    bus = DurableBus(storage.inbox, storage.outbox, shared=shared, announce=cluster.announce)
    workspaces = Workspaces(settings.data_dir / "workspaces")
    http = SharedHttp()
    failed: set[str] = set()  # channels whose start failed (the daemon records them)
    scheduler, reminders = _reminders(
        settings, storage, bus, lambda name: name in by_name and name not in failed, cluster
    )
    commands = CommandRouter()
    trusted = [c.name for c in channels if c.trusted]
    routing, turn_workspace, personas = wire_workspaces(
        settings, storage, workspaces, commands, trusted
    )
    register_reminder_commands(commands, reminders, workspace_of=routing.resolve)
    access, rate, decisions = _gatekeepers(settings, storage.access, bus, channels, commands)
    admin_auth = AdminAuth(storage.admin, is_admin=access.is_admin_sender)

    def admin_base() -> str:  # the bound port once the web app runs ([web] port = 0)
        port = daemon.web.port if daemon.web is not None else settings.web.port
        return base_url(settings.admin.public_url, settings.web.host, port)

    commands.register(admin_link_command(settings, admin_auth, access.is_admin, admin_base))
    stops = TurnStops()  # /stop: the dispatcher ends the turn, the command replies
    commands.register(stops.command())
    backlog = _catch_up(settings, channels)
    media = MediaFiles(settings.data_dir)
    storage.sessions.add_clear_hook(media.remove_session)  # a session's files go with it
    parts = ReadyParts(
        settings=settings,
        storage=storage,
        bus=bus,
        workspaces=workspaces,
        http=http,
        reminders=reminders,
        commands=commands,
        channels=by_name,
        metrics=metrics,
        offload=ToolResultOffload(workspaces.root, settings.context.max_tool_result_chars),
        media=media,
        routing=routing,
        turn_workspace=turn_workspace,
        is_admin=access.is_admin,
        model=model,
        late_note=backlog.late_note,
        runs=cluster.runs,
    )
    agent = LazyAgent(functools.partial(_agent_side, parts))
    dispatcher = Dispatcher(
        bus,
        agent.handle,
        max_concurrent=settings.agent.max_concurrent_chats,
        idle_s=settings.agent.worker_idle_s,
        filters=[rate, access, SizeGuard(bus, settings.agent.max_message_chars)],
        forget=lambda msg: storage.sessions.retract(msg.key, msg.message_id),
        cluster=cluster,
        stops=stops,
    )
    delivery = Delivery(
        storage.outbox,
        by_name,
        metrics=metrics,
        max_chars=settings.agent.max_answer_chars,
        runs=cluster.runs,
        fence=cluster.fence,
        state=storage.kv,
    )
    ownership = (
        ChatOwnership(
            bus,
            dispatcher,
            partitions=settings.cluster.partitions,
            poll_s=settings.cluster.poll_s,
            refill=scheduler.refill,
            settled=delivery.settled,
            in_doubt=delivery.look_up_in_doubt,
        )
        if shared
        else None
    )
    bind_metrics(
        metrics, scheduler=scheduler, dispatcher=dispatcher, outbox=storage.outbox, channels=by_name
    )
    daemon = Daemon(
        settings=settings,
        db=storage.backend,
        bus=bus,
        outbox=storage.outbox,
        sessions=storage.sessions,
        workspaces=workspaces,
        http=http,
        scheduler=scheduler,
        reminders=reminders,
        commands=commands,
        agent=agent,
        dispatcher=dispatcher,
        delivery=delivery,
        channels=by_name,
        failed_channels=failed,
        inbound=backlog.screen(
            access.refreshing(
                JournalScreen(access.allowed, settings.agent.max_message_chars, bus.put_inbound)
            )
        ),
        metrics=metrics,
        housekeeping=Housekeeping(
            storage,
            parts.offload,
            settings.retention,
            previews=storage.previews,
            media=media,
        ),
        supervisor=Supervisor(metrics),
        web=None,
        # The loop's default executor, before anything uses it (a turn's litellm set-up).
        prepare_loop=install_setup_executor if model is None else lambda: None,
        cluster=cluster,
        ownership=ownership,
    )
    web = settings.web
    if web.enabled if serve_web is None else serve_web:
        routes = channel_routes(channels)
        if settings.admin.enabled:  # jinja2 and the pages are imported only then
            from bot.app_admin import admin_routes

            routes += admin_routes(
                AdminParts(daemon, storage, admin_auth, personas, decisions, metrics.activity)
            )
        daemon.web = WebServer(
            web.host,
            web.port,
            health=daemon.health,
            metrics=metrics.render,
            status=functools.partial(live_status, daemon),
            routes=routes,
        )
    return daemon


def _protect_logs(settings: Settings) -> None:
    """Configured secrets masked in every log record from now on; placeholders are not
    (they would mask ordinary words), and start-up says so once."""
    ignored = protect_logs([*secret_values(settings), *url_secrets(settings.llm.api_base)])
    if ignored:
        log.info(
            "log redaction: %d configured secret value(s) not masked: too short or too common"
            ' to be a secret (under %d characters, or a placeholder such as "none")',
            len(ignored),
            MIN_SECRET,
        )


def _agent_side(parts: ReadyParts) -> AgentSide:
    from bot.app_agent import build_agent

    return build_agent(parts)


def _channels(
    settings: Settings,
    storage: Storage,
    channels: Sequence[Channel] | ChannelsFactory | None,
    local: Sequence[Channel],
    standby: bool = False,
) -> list[Channel]:
    """The channels given, or built by the factory, or ``local`` plus every configured
    platform; their state (polling offsets, seen threads) lives in this daemon's store."""
    ctx = ChannelContext(
        state=storage.kv, data_dir=settings.data_dir, standby=standby, shared=standby
    )
    if channels is None:
        return [*local, *platform_channels(settings, ctx)]
    if callable(channels):
        return list(channels(ctx))
    return list(channels)


def _replica(settings: Settings, url: str, channels: Sequence[Channel]) -> Cluster:
    """This process as one replica of the bot on a shared PostgreSQL: its leases (chat
    partitions, and each channel that receives on one replica at a time) on the server's
    clock, renewed on a connection of their own."""
    from bot.cluster.agreement import Agreement
    from bot.cluster.replica import PgCluster, Timing

    cfg = settings.cluster
    singles = [
        lease
        for c in channels
        if isinstance(c, ReceivesAlone) and (lease := c.receive_lease) is not None
    ]
    web = f"{settings.web.host}:{settings.web.port}" if settings.web.enabled else ""
    timing = Timing(ttl_s=cfg.lease_ttl_s, renew_s=cfg.renew_every_s, partitions=cfg.partitions)
    agreement = Agreement.of(cfg.partitions, [c.name for c in channels], settings.llm.model)
    return PgCluster(
        url, timing=timing, label=cfg.replica, singles=singles, web=web, agreement=agreement
    )


def _catch_up(settings: Settings, channels: Sequence[Channel]) -> Backlog:
    """What was said while the daemon was away: channels that read history after a start
    read it within the grace (and within the inbox's memory, so what was journaled
    before is recognized); everywhere, older is not answered and younger says it is late."""
    grace = timedelta(hours=settings.reminders.missed_grace_h)
    window = CatchUpWindow(min(grace, timedelta(days=settings.retention.inbox_days)))
    for channel in channels:
        if grace and isinstance(channel, CatchesUp):
            channel.catch_up_within(window)
    return Backlog(grace)


def _reminders(
    settings: Settings,
    storage: Storage,
    bus: DurableBus,
    running: Callable[[str], bool],
    cluster: Cluster,
) -> tuple[ReminderScheduler, ReminderService]:
    """The reminder table's timer (its jobs carry it in their arguments) and its service;
    ``running`` tells whether a channel runs (reminders for others stay pending)."""
    scheduler = ReminderScheduler(
        storage.reminders,
        bus,
        grace=timedelta(hours=settings.reminders.missed_grace_h),
        running=running,
        runs=cluster.runs,
        fence=cluster.fence,
    )
    reminders = ReminderService(
        storage.reminders,
        storage.user_settings,
        scheduler,
        default_timezone=settings.timezone,
        max_active_per_user=settings.reminders.max_active_per_user,
        min_followup_interval=timedelta(minutes=settings.reminders.min_followup_interval_min),
    )
    return scheduler, reminders


def _gatekeepers(
    settings: Settings,
    store: Access,
    bus: DurableBus,
    channels: Sequence[Channel],
    commands: CommandRouter,
) -> tuple[AccessControl, RateLimit, PairingDecisions]:
    """Access (allow lists, pairing for strangers) and the per-user rate limit, with the
    admins' /approve and /deny."""
    pairing = Pairing.from_settings(store, settings.access)
    access = AccessControl(
        bus,
        allow_from=allow_lists(settings),
        admins=settings.admins,
        trusted_channels=[c.name for c in channels if c.trusted],
        policy=settings.access.dm_policy,
        pairing=pairing,
    )
    decisions = PairingDecisions(pairing, bus)
    register_pairing_commands(commands, decisions, access.is_admin)
    buckets = TokenBuckets(settings.limits.user_burst, settings.limits.user_refill_s)
    rate = RateLimit(bus, buckets, exempt=access.is_admin, may_answer=access.may_answer)
    return access, rate, decisions


def wire_workspaces(
    settings: Settings,
    storage: Storage,
    folders: Workspaces,
    commands: CommandRouter,
    trusted: Sequence[str],
) -> tuple[WorkspaceRouter, WorkspaceLookup, Personas]:
    """Routing, persona versions and their chat commands (``/new`` too: who may wipe a
    group's history is the workspace's admins). Returns the router, the lookup each
    agent turn uses (its workspace, with edits made on disk recorded first) and the
    persona service (the admin page edits through the same one: one lock per file)."""
    routing = WorkspaceRouter(settings.workspaces, storage.workspaces, folders)
    personas = Personas(
        folders,
        storage.workspaces,
        max_chars=settings.workspaces.max_file_chars,
        configured=settings.workspaces.names(),
    )
    admins = WorkspaceAdmins(settings.workspaces, settings.admins, trusted)
    WorkspaceCommands(personas, routing, admins).register(commands)
    commands.register(new_session_command(storage.sessions, routing.resolve, admins.is_admin))

    async def turn_workspace(msg: InboundMessage) -> str:
        name = await routing.resolve(msg)
        await personas.sync(name)
        return name

    return routing, turn_workspace, personas


def channel_routes(channels: Sequence[Channel]) -> list[Route]:
    """The webhook routes channels mount on the shared web app."""
    return [r for c in channels if isinstance(c, ProvidesRoutes) for r in c.routes()]


async def run_daemon(settings: Settings, *, terminal: bool) -> int:
    cli = _terminal(settings, interactive=True) if terminal else None
    daemon = build_daemon(settings, local=[cli] if cli else [])
    stop_on_signals(daemon.request_stop, cli.interrupt if cli else None)
    await daemon.start()
    startup.after_ready()  # the collector, paused by `bot run` until now
    if cli is not None:
        await _first(daemon.wait_stopped(), cli.finished.wait())
    else:
        await daemon.wait_stopped()
    await daemon.stop()
    return 0


async def run_chat(settings: Settings) -> int:
    cli = _terminal(settings)
    # No /healthz here: a terminal session next to a running `bot run` must not clash.
    daemon = build_daemon(settings, local=[cli], serve_web=False)
    stop_on_signals(daemon.request_stop, cli.interrupt)
    await daemon.start()
    await _first(daemon.wait_stopped(), cli.finished.wait())
    await daemon.stop()
    return 0


def _terminal(settings: Settings, interactive: bool | None = None) -> CLIChannel:
    """The terminal channel; at a terminal, the log goes to a file (said once) so that
    no log line lands inside the line being typed."""
    from channels.cli import CLIChannel

    cli = CLIChannel(
        interactive=interactive,
        history=settings.data_dir / "chat_history",
        files=settings.data_dir / "files",
    )
    if cli.interactive:
        from bot.ops.logfile import divert_to_file

        sys.stdout.write(f"(logs: {divert_to_file(settings.data_dir)}; Ctrl-D to leave)\n")
        sys.stdout.flush()
    return cli


async def _first(*aws: Coroutine[Any, Any, Any]) -> None:
    tasks = [asyncio.ensure_future(a) for a in aws]
    _, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()


async def mcp_checks(settings: Settings) -> list[Check]:
    """``bot doctor``'s rows for the MCP servers (each connected to and listed now)."""
    from tools.mcp import report as mcp_report

    return mcp_report.checks(await mcp_report.probe(settings.mcp))


async def mcp_list(settings: Settings) -> str:
    """``bot mcp list``: each server, its state and its tools' names."""
    from tools.mcp import report as mcp_report

    return mcp_report.render(await mcp_report.probe(settings.mcp))


def example_config() -> str:
    """The commented bot.toml ``bot init`` writes: the core keys, then each platform's;
    only the keys a user must set are live (bot.config.example)."""
    from bot.config.example import unpinned

    base = template_text("bot.example.toml")
    head, sep, tail = base.partition("[web]")
    sections = "\n".join(spec.example for spec in SPECS if spec.example)
    return unpinned(f"{head}{sections}\n{sep}{tail}", Settings)


def write_example_config(path: Path) -> None:
    path.write_text(example_config(), encoding="utf-8")
