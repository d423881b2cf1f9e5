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
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
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
from bot.dispatcher.middlewares import AccessControl, BlankGuard, SizeGuard
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
from bot.workspaces.chat_files import ChatFiles
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
    ReportsChatMoves,
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

    def web_address() -> str:  # the bound port once the web app runs ([web] port = 0)
        return f"{settings.web.host}:{daemon.web.port}" if daemon.web is not None else ""

    core = _core(settings, channels, local, stores, web_address)

    def admin_base() -> str:  # the bound port once the web app runs ([web] port = 0)
        port = daemon.web.port if daemon.web is not None else settings.web.port
        return base_url(settings.admin.public_url, settings.web.host, port)

    front = _front(core, admin_base)
    backlog = _catch_up(settings, core.channels)
    delivery = _delivery(core)
    parts = _ready_parts(core, front, backlog, model, delivery)
    agent = LazyAgent(functools.partial(_agent_side, parts))
    dispatcher = _dispatcher(core, front, agent)
    ownership = _ownership(core, dispatcher, delivery) if core.shared else None
    bind_metrics(
        core.metrics,
        scheduler=core.scheduler,
        dispatcher=dispatcher,
        outbox=core.storage.outbox,
        channels=core.by_name,
    )
    daemon = _daemon(
        core,
        parts,
        agent=agent,
        dispatcher=dispatcher,
        delivery=delivery,
        inbound=_inbound(core, front.access, backlog),
        ownership=ownership,
    )
    if settings.web.enabled if serve_web is None else serve_web:
        daemon.web = _web_server(core, front, daemon)
    return daemon


@dataclass(frozen=True)
class _Core:
    """What every later part is wired to, built first by :func:`_core`: one bundle so
    the steps after it take one argument instead of a dozen."""

    settings: Settings
    metrics: PrometheusMetrics
    storage: Storage
    shared: bool
    channels: list[Channel]
    by_name: dict[str, Channel]
    cluster: Cluster
    bus: DurableBus
    workspaces: Workspaces
    http: SharedHttp
    failed: set[str]
    scheduler: ReminderScheduler
    reminders: ReminderService


def _core(
    settings: Settings,
    channels: Sequence[Channel] | ChannelsFactory | None,
    local: Sequence[Channel],
    stores: Callable[[Database], Storage],
    web_address: Callable[[], str],
) -> _Core:
    """The store, the channels over it, this process's place among replicas, the bus
    and the reminder timer: what the commands, the dispatcher and delivery all use."""
    metrics = PrometheusMetrics()
    url = settings.store.url.get_secret_value()
    storage = storage_for(
        url, settings.data_dir, stores, max_connections=settings.store.max_connections
    )
    shared = is_postgres(url)  # replicas may share it: see bot/cluster
    built = _channels(settings, storage, channels, local, standby=shared)
    by_name = {c.name: c for c in built}
    cluster = _replica(settings, url, built, web_address) if shared else SingleProcess()
    # Shared: a message journaled here for a chat another replica runs wakes that one.
    bus = DurableBus(storage.inbox, storage.outbox, shared=shared, announce=cluster.announce)
    workspaces = Workspaces(settings.data_dir / "workspaces")
    http = SharedHttp()
    failed: set[str] = set()  # channels whose start failed (the daemon records them)
    scheduler, reminders = _reminders(
        settings, storage, bus, lambda name: name in by_name and name not in failed, cluster
    )
    for channel in built:  # a chat the platform gave a new id: its reminders follow it
        if isinstance(channel, ReportsChatMoves):
            channel.on_chat_moved(reminders.chat_moved)
    return _Core(
        settings=settings,
        metrics=metrics,
        storage=storage,
        shared=shared,
        channels=built,
        by_name=by_name,
        cluster=cluster,
        bus=bus,
        workspaces=workspaces,
        http=http,
        failed=failed,
        scheduler=scheduler,
        reminders=reminders,
    )


@dataclass(frozen=True)
class _Front:
    """What stands before a turn, built by :func:`_front`: the chat commands that need
    no model and the services they share with the dispatcher and the admin page."""

    commands: CommandRouter
    routing: WorkspaceRouter
    turn_workspace: WorkspaceLookup
    personas: Personas
    access: AccessControl
    rate: RateLimit
    decisions: PairingDecisions
    admin_auth: AdminAuth
    stops: TurnStops


def _front(core: _Core, admin_base: Callable[[], str]) -> _Front:
    """The command router and, in the order their commands are registered: workspaces
    and /new, reminders, access and pairing, /admin, /stop. ``admin_base`` is the admin
    page's address, read when a link is made (the web app's port is bound later)."""
    settings, storage = core.settings, core.storage
    commands = CommandRouter(_command_hints(core.channels))
    trusted = [c.name for c in core.channels if c.trusted]
    routing, turn_workspace, personas = wire_workspaces(
        settings, storage, core.workspaces, commands, trusted
    )
    register_reminder_commands(
        commands,
        core.reminders,
        workspace_of=routing.resolve,
        is_admin=WorkspaceAdmins(settings.workspaces, settings.admins, trusted).is_admin,
    )
    access, rate, decisions = _gatekeepers(
        settings, storage.access, core.bus, core.channels, commands
    )
    core.scheduler.check_owners(lambda r: access.still_allowed(r.key, r.user_id))
    admin_auth = AdminAuth(storage.admin, is_admin=access.is_admin_sender)
    commands.register(admin_link_command(settings, admin_auth, access.is_admin, admin_base))
    stops = TurnStops()  # /stop: the dispatcher ends the turn, the command replies
    commands.register(stops.command())
    return _Front(
        commands=commands,
        routing=routing,
        turn_workspace=turn_workspace,
        personas=personas,
        access=access,
        rate=rate,
        decisions=decisions,
        admin_auth=admin_auth,
        stops=stops,
    )


def _ready_parts(
    core: _Core, front: _Front, backlog: Backlog, model: ChatModel | None, delivery: Delivery
) -> ReadyParts:
    """What the agent side is built over when first needed, and the media folder whose
    files go with a cleared session."""
    settings, storage = core.settings, core.storage
    media = MediaFiles(settings.data_dir)
    storage.sessions.add_clear_hook(media.remove_session)  # a session's files go with it
    return ReadyParts(
        settings=settings,
        storage=storage,
        bus=core.bus,
        workspaces=core.workspaces,
        http=core.http,
        reminders=core.reminders,
        commands=front.commands,
        channels=core.by_name,
        metrics=core.metrics,
        offload=ToolResultOffload(core.workspaces.root, settings.context.max_tool_result_chars),
        media=media,
        routing=front.routing,
        turn_workspace=front.turn_workspace,
        is_admin=front.access.is_admin,
        model=model,
        late_note=backlog.late_note,
        runs=core.cluster.runs,
        end_turn=front.stops.end,
        delivering=delivery.delivering,
    )


def _dispatcher(core: _Core, front: _Front, agent: LazyAgent) -> Dispatcher:
    """Per-chat lanes into the agent side, behind the rate limit, access, the size cap
    and the blank check; a message /stop withdrew or ended, or one retired, leaves its
    session too."""
    settings, storage, bus = core.settings, core.storage, core.bus
    return Dispatcher(
        bus,
        agent.handle,
        max_concurrent=settings.agent.max_concurrent_chats,
        idle_s=settings.agent.worker_idle_s,
        filters=[
            front.rate,
            front.access,
            SizeGuard(bus, settings.agent.max_message_chars),
            BlankGuard(),
        ],
        forget=lambda msg: storage.sessions.retract(msg.key, msg.message_id),
        cluster=core.cluster,
        stops=front.stops,
    )


def _delivery(core: _Core) -> Delivery:
    """Outbox to channels; among replicas it sends only for the chats this one runs,
    its claims fenced by their partition's lease. A chat that refuses the bot for good
    is told to the reminders service (its repeats and follow-ups end), and so is one
    that lives on under a new id (they follow it)."""
    return Delivery(
        core.storage.outbox,
        core.by_name,
        metrics=core.metrics,
        max_chars=core.settings.agent.max_answer_chars,
        runs=core.cluster.runs,
        fence=core.cluster.fence,
        state=core.storage.kv,
        chat_events=core.reminders,
    )


def _ownership(core: _Core, dispatcher: Dispatcher, delivery: Delivery) -> ChatOwnership:
    """Among replicas (a shared store only): the chats of the partitions this one holds,
    queued from the shared inbox; a partition is idle when no turn runs and no reply
    is unsettled."""
    cfg = core.settings.cluster
    return ChatOwnership(
        core.bus,
        dispatcher,
        partitions=cfg.partitions,
        poll_s=cfg.poll_s,
        refill=core.scheduler.refill,
        settled=delivery.settled,
        in_doubt=delivery.look_up_in_doubt,
    )


def _chat_files(core: _Core) -> ChatFiles:
    """What the bot wrote for each chat: removed with the chat's history (a clear hook)
    and, file by file, by housekeeping."""
    chat_files = ChatFiles(core.workspaces.root)
    core.storage.sessions.add_clear_hook(chat_files.remove_session)
    return chat_files


def _inbound(
    core: _Core, access: AccessControl, backlog: Backlog
) -> Callable[[InboundMessage], Awaitable[None]]:
    """What channels hand a message to: one said while away past the grace is dropped;
    the sender's approvals are re-read so the journal screen, which refuses before
    journaling, judges by today's."""
    screen = JournalScreen(
        access.allowed, core.settings.agent.max_message_chars, core.bus.put_inbound
    )
    return backlog.screen(access.refreshing(screen))


def _daemon(
    core: _Core,
    parts: ReadyParts,
    *,
    agent: LazyAgent,
    dispatcher: Dispatcher,
    delivery: Delivery,
    inbound: Callable[[InboundMessage], Awaitable[None]],
    ownership: ChatOwnership | None,
) -> Daemon:
    """The daemon over the parts built (no web app yet: it is added once built)."""
    storage, metrics = core.storage, core.metrics
    return Daemon(
        settings=core.settings,
        db=storage.backend,
        bus=core.bus,
        outbox=storage.outbox,
        sessions=storage.sessions,
        workspaces=core.workspaces,
        http=core.http,
        scheduler=core.scheduler,
        reminders=core.reminders,
        commands=parts.commands,
        agent=agent,
        dispatcher=dispatcher,
        delivery=delivery,
        channels=core.by_name,
        failed_channels=core.failed,
        inbound=inbound,
        metrics=metrics,
        housekeeping=Housekeeping(
            storage,
            parts.offload,
            core.settings.retention,
            previews=storage.previews,
            media=parts.media,
            chat_files=_chat_files(core),
        ),
        supervisor=Supervisor(metrics),
        web=None,
        # The loop's default executor, before anything uses it (a turn's litellm set-up).
        prepare_loop=install_setup_executor if parts.model is None else lambda: None,
        cluster=core.cluster,
        ownership=ownership,
    )


def _web_server(core: _Core, front: _Front, daemon: Daemon) -> WebServer:
    """The one web app: health, metrics, status, the channels' webhooks and, when
    ``[admin] enabled``, the admin page (jinja2 and the pages are imported only then)."""
    web = core.settings.web
    routes = channel_routes(core.channels)
    if core.settings.admin.enabled:
        from bot.app_admin import admin_routes

        admin = AdminParts(
            daemon,
            core.storage,
            front.admin_auth,
            front.personas,
            front.decisions,
            core.metrics.activity,
        )
        routes += admin_routes(admin)
    return WebServer(
        web.host,
        web.port,
        health=daemon.health,
        metrics=core.metrics.render,
        status=functools.partial(live_status, daemon),
        routes=routes,
    )


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


def _replica(
    settings: Settings, url: str, channels: Sequence[Channel], web: Callable[[], str]
) -> Cluster:
    """This process as one replica of the bot on a shared PostgreSQL: its leases (chat
    partitions, and each channel that receives on one replica at a time) on the server's
    clock, renewed on a connection of their own; ``web``: its web app's bound address,
    in its heartbeat for `bot status`."""
    from bot.cluster.agreement import Agreement
    from bot.cluster.replica import PgCluster, Timing

    cfg = settings.cluster
    singles = [
        lease
        for c in channels
        if isinstance(c, ReceivesAlone) and (lease := c.receive_lease) is not None
    ]
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
        max_active_per_chat=settings.reminders.max_active_per_chat,
        min_followup_interval=timedelta(minutes=settings.reminders.min_followup_interval_min),
        min_group_repeat=timedelta(minutes=settings.reminders.min_group_repeat_min),
    )
    return scheduler, reminders


def _command_hints(channels: Sequence[Channel]) -> dict[str, str]:
    """How each channel's users type a chat command, where a plain ``/name`` does not
    reach the bot: an adapter's optional ``command_hint`` (said in /help and the
    pairing reply)."""
    return {c.name: hint for c in channels if (hint := getattr(c, "command_hint", ""))}


def _gatekeepers(
    settings: Settings,
    store: Access,
    bus: DurableBus,
    channels: Sequence[Channel],
    commands: CommandRouter,
) -> tuple[AccessControl, RateLimit, PairingDecisions]:
    """Access (allow lists, pairing for strangers) and the per-user and per-chat rate
    limits, with the admins' /approve and /deny."""
    pairing = Pairing.from_settings(store, settings.access)
    access = AccessControl(
        bus,
        allow_from=allow_lists(settings),
        admins=settings.admins,
        trusted_channels=[c.name for c in channels if c.trusted],
        policy=settings.access.dm_policy,
        pairing=pairing,
        command_hints=_command_hints(channels),
    )
    decisions = PairingDecisions(pairing, bus)
    register_pairing_commands(commands, decisions, access.is_admin)
    limits = settings.limits
    rate = RateLimit(
        bus,
        TokenBuckets(limits.user_burst, limits.user_refill_s),
        exempt=access.is_admin,
        may_answer=access.may_answer,
        not_ours=commands.for_another_bot,
        chats=TokenBuckets(limits.chat_burst, limits.chat_refill_s),
    )
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


def tool_checks(settings: Settings) -> list[Check]:
    """``bot doctor``'s notes on the tools, network or not: a ``disabled_tools`` name that
    is no tool turns nothing off (the start-up log says so too, with the one meant)."""
    from tools.loader import build_registry

    known = build_registry().names()
    return [Check("tools", "note", line) for line in settings.workspaces.unknown_tools(known)]


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
