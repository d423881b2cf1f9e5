"""Lifecycle only: start the parts in order, stop them in reverse, gracefully.

Every part is built by the composition root (:mod:`bot.app`) and handed in whole;
this module decides nothing about what exists, only when it runs. Start-up never
waits for ``import litellm`` (seconds and ~190 MB): the model client warms up in the
background and the first turn awaits it if it has to.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from bot.bus.durable import DurableBus
from bot.cluster.base import Cluster, SingleProcess
from bot.config import Settings
from bot.delivery import Delivery
from bot.dispatcher.dispatcher import Dispatcher
from bot.dispatcher.ownership import ChatOwnership
from bot.errors import ChannelError, ConfigError
from bot.handlers.commands import CommandRouter
from bot.http import SharedHttp
from bot.messages import InboundMessage
from bot.ops.housekeeping import Housekeeping
from bot.ops.loop import loop_name
from bot.ops.metrics import PrometheusMetrics
from bot.ops.supervisor import Supervisor
from bot.ops.web import Health, WebServer, probe_health
from bot.reminders.scheduler import ReminderScheduler
from bot.reminders.service import ReminderService
from bot.store.base import Backend, Outbox, Sessions
from bot.workspaces.folders import Workspaces
from channels.base import Channel, ReceivesAlone, channel_health

if TYPE_CHECKING:
    from bot.agent.memory.service import MemoryService
    from bot.agent.runner import AgentRunner
    from bot.agent.skills.catalog import SkillCatalog

log = logging.getLogger(__name__)


class Background(Protocol):
    """An optional part started after ``ready:`` that connects on its own (MCP servers):
    it never delays start-up, and its states are informational in /healthz."""

    def start(self) -> None: ...

    async def stop(self) -> None: ...

    def states(self) -> Mapping[str, str]: ...


class MCPView(Protocol):
    """One MCP server as the admin page shows it (tools/mcp's report rows)."""

    @property
    def name(self) -> str: ...
    @property
    def transport(self) -> str: ...
    @property
    def state(self) -> str: ...  # "ready", or "failed: <the last error>", ...
    @property
    def tools(self) -> Sequence[str]: ...
    @property
    def skipped(self) -> Sequence[str]: ...


def _no_servers() -> Sequence[MCPView]:
    return ()


@dataclass(frozen=True)
class AgentSide:
    """What answers messages: the turn loop, its tools, and the parts that start after
    ``ready:`` (MCP servers). Built by :mod:`bot.app_agent`."""

    runner: AgentRunner
    tools: Any  # the ToolRegistry: tools/ is not bot's to import
    handle: Callable[[InboundMessage], Awaitable[None]]  # one turn (the dispatcher's)
    background: Sequence[Background] = ()
    warmup: Callable[[], None] = lambda: None  # right after it is built
    # What the admin page shows and changes through the same services as the chat.
    skills: SkillCatalog | None = None
    memory: MemoryService | None = None
    mcp_servers: Callable[[], Sequence[MCPView]] = _no_servers


class LazyAgent:
    """The agent side, built once, by the first that needs it: the daemon right after
    ``ready:`` (no turn runs before the channels are up, so start-up skips its imports),
    or a replayed message's turn before that."""

    def __init__(self, build: Callable[[], AgentSide]) -> None:
        self._build = build
        self._side: AgentSide | None = None

    @property
    def built(self) -> AgentSide | None:
        return self._side

    def get(self) -> AgentSide:
        if self._side is None:
            started = time.perf_counter()
            self._side = self._build()
            log.debug("agent side built in %.0f ms", (time.perf_counter() - started) * 1000)
        return self._side

    async def handle(self, msg: InboundMessage) -> None:
        await self.get().handle(msg)


class _Leases:
    """The daemon's answer to its leases coming and going: a chat partition's go to
    :class:`ChatOwnership`; a channel's receiving lease (one long poller per token)
    turns that channel's receiving on or off, once the channels have started."""

    def __init__(self, daemon: Daemon, chats: ChatOwnership) -> None:
        self._daemon = daemon
        self._chats = chats
        self.started = False  # the channels: before, their start looks at the leases

    def _channel(self, lease: str) -> ReceivesAlone | None:
        for channel in self._daemon.channels.values():
            if isinstance(channel, ReceivesAlone) and channel.receive_lease == lease:
                return channel
        return None

    async def gained(self, lease: str) -> None:
        channel = self._channel(lease)
        if channel is None:
            await self._chats.gained(lease)
        elif self.started:
            log.info("this replica holds %s: receiving", lease)
            await channel.receive(True)

    async def lost(self, lease: str) -> None:
        channel = self._channel(lease)
        if channel is None:
            await self._chats.lost(lease)
        else:
            await channel.receive(False)

    def idle(self, lease: str) -> bool:
        return self._chats.idle(lease)

    def woken(self, lease: str) -> None:
        self._chats.woken(lease)


@dataclass
class Daemon:
    """The running daemon's parts, as the composition root wired them."""

    settings: Settings
    db: Backend  # the store's connection: SQLite's database or PostgreSQL's pool
    bus: DurableBus
    outbox: Outbox
    sessions: Sessions
    workspaces: Workspaces
    http: SharedHttp
    scheduler: ReminderScheduler
    reminders: ReminderService
    commands: CommandRouter
    agent: LazyAgent
    dispatcher: Dispatcher
    delivery: Delivery
    channels: Mapping[str, Channel]
    failed_channels: set[str]  # those whose start failed; shared with the reminder timer
    inbound: Callable[[InboundMessage], Awaitable[None]]  # journals, then queues
    metrics: PrometheusMetrics
    housekeeping: Housekeeping
    web: WebServer | None
    prepare_loop: Callable[[], object] = lambda: None  # before anything uses the loop's executor
    state: str = "starting"  # -> ready -> stopping -> stopped; /healthz reports it
    ready_s: float | None = None
    ready_at: float | None = None  # wall clock at ready:, for /status
    supervisor: Supervisor = field(default_factory=Supervisor)  # restarts what dies
    # Among replicas on PostgreSQL: the leases this process holds, and what it does when
    # one comes or goes. One process (SQLite): everything is its own, nothing runs.
    cluster: Cluster = field(default_factory=SingleProcess)
    ownership: ChatOwnership | None = None
    _stopping: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def runner(self) -> AgentRunner:
        return self.agent.get().runner

    @property
    def tools(self) -> Any:
        return self.agent.get().tools

    def _background(self) -> Sequence[Background]:
        side = self.agent.built
        return side.background if side is not None else ()

    async def start(self) -> None:
        started = time.perf_counter()
        self.prepare_loop()
        if self.web is None:
            await self._start(started)
            return
        # First: a port in use fails the start before anything else is opened.
        await self.web.start()
        try:
            await self._start(started)
        except BaseException:
            await self.web.stop()
            raise

    async def _start(self, started: float) -> None:
        self.settings.data_dir.mkdir(parents=True, exist_ok=True)
        await self.db.open()
        self.workspaces.ensure()
        await self.http.start()
        leases = _Leases(self, self.ownership) if self.ownership is not None else None
        if leases is not None:  # its first tick takes this replica's share
            try:
                await self.cluster.start(leases)
            except ConfigError:  # refused to join the others: nothing of it runs
                await self.http.stop()
                await self.db.close()
                raise
        # What the last run left unfinished is queued before the scheduler starts: a
        # reminder it fires now is in the outbox too, and must not be queued twice.
        inbound, outbound = await self.bus.replay()
        if inbound or outbound:
            log.info(
                "resuming %d unanswered messages and %d undelivered replies", inbound, outbound
            )
        scheduled = await self.scheduler.start()
        self.housekeeping.start()
        self.supervisor.spawn("outbound", lambda: self.delivery.route(self.bus))
        self.supervisor.spawn("dispatcher", self.dispatcher.run)
        names = list(self.channels)
        connected = await asyncio.gather(*(self._start_channel(name) for name in names))
        up = [name for name, ok in zip(names, connected, strict=True) if ok]
        if leases is not None:
            await self._receive_where_held(leases)
        if not up:
            log.warning("%s", self._no_channel())
        self.ready_s = time.perf_counter() - started
        self.ready_at = time.time()
        self.state = "ready"
        log.info(
            "ready: channels=%s model=%s reminders=%d data_dir=%s web=%s loop=%s (%.0f ms)",
            ",".join(up) or "none",
            self.settings.llm.model,
            scheduled,
            self.settings.data_dir,
            self.web.url if self.web is not None else "off",
            loop_name(asyncio.get_running_loop()),
            self.ready_s * 1000,
        )
        # After ready, not before: litellm's import holds the GIL for seconds, and channels
        # connecting meanwhile would wait on it. A turn that comes first awaits it.
        side = self.agent.get()
        side.warmup()
        for part in side.background:
            part.start()

    async def _receive_where_held(self, leases: _Leases) -> None:
        """Channels that receive on one replica at a time: on here if this one holds the
        lease now; later gains and losses switch them (they started standing by)."""
        leases.started = True
        for channel in self.channels.values():
            if not isinstance(channel, ReceivesAlone):
                continue
            lease = channel.receive_lease
            if lease is not None and self.cluster.holds(lease):
                await channel.receive(True)

    async def _start_channel(self, name: str) -> bool:
        """Whether ``name`` started. Any failure is that channel's alone: an error its
        client library raised unwrapped (a bad header, a bug) is not let end the start
        of the others, and the daemon still reaches ready."""
        try:
            await self.channels[name].start(self.inbound)
        except Exception as exc:
            expected = isinstance(exc, ChannelError)
            why = str(exc) if expected else f"{type(exc).__name__}: {exc}"
            log.error("channel %s failed to start: %s", name, why, exc_info=not expected)
            self.failed_channels.add(name)
            return False
        self.failed_channels.discard(name)
        return True

    def _no_channel(self) -> str:
        """Why no channel runs, for the start-up warning and /healthz."""
        if not self.channels:
            why = (
                "none is configured (set a channel's token in bot.toml, "
                "or run `bot chat` or `bot run` in a terminal)"
            )
        else:
            why = f"every configured one failed to start ({', '.join(sorted(self.channels))})"
        return f"no channel is running: {why}; nobody can reach the bot and reminders wait"

    async def health(self) -> Health:
        health = await self._probe()
        if self.state == "ready" and len(self.failed_channels) == len(self.channels):
            return Health({**health.parts, "channels": self._no_channel()}, health.info)
        return health

    async def _probe(self) -> Health:
        return await probe_health(
            state=self.state,
            writable=self.db.writable,
            channels={name: channel_health(c).state for name, c in self.channels.items()},
            info={**self._cluster_info(), **self._background_info()},
            tasks=self._task_states(),
            checks=self._cluster_checks(),
        )

    def _background_info(self) -> dict[str, str]:
        return {k: v for part in self._background() for k, v in part.states().items()}

    def _cluster_info(self) -> dict[str, str]:
        """What this replica holds (name#token), where replicas share the database."""
        if isinstance(self.cluster, SingleProcess):
            return {}
        held = self.cluster.held()
        leases = " ".join(f"{name}#{token}" for name, token in held.items())
        info = {"replica": self.cluster.replica, "leases": leases or "none"}
        if self.cluster.differences.noted:
            info["cluster_differs"] = "; ".join(self.cluster.differences.noted)
        return info

    def _cluster_checks(self) -> dict[str, str]:
        """Failing while replicas' configurations would lose or double messages, or
        while the leases cannot be renewed (this replica runs no chat then); a replica
        that only differs (the model) is said in ``cluster_differs``."""
        if isinstance(self.cluster, SingleProcess):
            return {}
        problems = [*self.cluster.differences.refused, self.cluster.failing]
        return {"cluster": "; ".join(p for p in problems if p) or "ok"}

    def _task_states(self) -> dict[str, str]:
        tasks = self.supervisor.states()
        if self.state == "ready":  # else the daemon part already says why it is not
            tasks["scheduler"] = "ok" if self.scheduler.running else "not running"
            tasks["housekeeping"] = "ok" if self.housekeeping.alive else "not running"
        return tasks

    def request_stop(self, reason: str = "request") -> None:
        if self._stopping.is_set():
            log.info("%s: already stopping", reason)
            return
        log.info(
            "%s: stopping (running turns get up to %g s)",
            reason,
            self.settings.agent.shutdown_timeout_s,
        )
        self._stopping.set()

    async def wait_stopped(self) -> None:
        await self._stopping.wait()

    async def stop(self, timeout: float | None = None) -> None:
        """Stop taking messages, let running turns finish, flush replies, close.

        Turns still running after ``timeout`` (default ``agent.shutdown_timeout_s``) are
        cancelled; their messages stay in the inbox journal and are answered after the
        next start, so nothing accepted is lost.
        """
        timeout = self.settings.agent.shutdown_timeout_s if timeout is None else timeout
        self.state = "stopping"
        await self.scheduler.stop()  # in-flight reminder fires finish first
        if not await self.dispatcher.drain(timeout):
            log.warning("turns unfinished after %.1f s; they resume at the next start", timeout)
        side = self.agent.built
        if side is not None:  # an unfinished fold runs again next time
            await side.runner.consolidator.close()
        await self.delivery.take_remaining(self.bus)
        if not await self.delivery.drain(timeout=5.0):
            log.warning("some replies not delivered at shutdown; they stay in the outbox")
        await self.supervisor.stop()
        await self.housekeeping.stop()
        for part in self._background():
            try:
                await part.stop()
            except Exception:
                log.exception("%s did not stop cleanly", type(part).__name__)
        for channel in self.channels.values():
            try:
                await channel.stop()
            except Exception:
                log.exception("channel %s did not stop cleanly", channel.name)
        if self.ownership is not None:
            await self.ownership.stop()
        await self.cluster.stop()  # its leases released: the others take over at once
        if self.web is not None:
            await self.web.stop()
        await self.http.stop()
        await self.db.close()
        self.state = "stopped"
        log.info("stopped")
