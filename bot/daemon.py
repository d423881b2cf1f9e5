"""The one wiring module: builds every part, starts them in order, stops them gracefully.

Only this module imports concrete channels and tools. What happens in one turn lives
in :mod:`bot.handlers.turn`; this module decides which parts exist and in what order they start
and stop. Start-up never waits for ``import litellm`` (seconds and ~190 MB): the model
client warms up in the background and the first turn awaits it if it has to.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import aiohttp

from bot.agent.llm.client import LLMClient
from bot.agent.runner import AgentRunner, ChatModel
from bot.bus.durable import DurableBus
from bot.config import Settings
from bot.delivery import Delivery
from bot.dispatcher.dispatcher import Dispatcher
from bot.dispatcher.middlewares import AccessControl, SizeGuard
from bot.errors import ChannelError
from bot.handlers.commands import CommandRouter
from bot.handlers.turn import TYPING_REFRESH_S, TurnHandler
from bot.messages import InboundMessage
from bot.ops.bindings import bind_metrics, stop_on_signals
from bot.ops.metrics import CountingToolBox, PrometheusMetrics
from bot.ops.web import Health, WebServer, probe_health
from bot.reminders.commands import register_reminder_commands
from bot.reminders.scheduler import ReminderScheduler
from bot.reminders.service import ReminderService
from bot.store.db import Database
from bot.store.inbox import InboxStore
from bot.store.outbox import OutboxStore
from bot.store.reminders import ReminderStore, UserSettingsStore
from bot.store.sessions import SessionStore
from bot.workspaces.folders import Workspaces
from channels.base import Channel
from tools.weather import weather_command

log = logging.getLogger(__name__)

# TYPING_REFRESH_S is re-exported: it used to be defined here.
__all__ = ["TYPING_REFRESH_S", "Daemon", "build_model", "install_signal_handlers"]


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


class Daemon:
    def __init__(
        self,
        settings: Settings,
        *,
        channels: Sequence[Channel] = (),
        model: ChatModel | None = None,
        serve_web: bool | None = None,
    ) -> None:
        from tools.loader import build_registry

        self.settings = settings
        self.state = "starting"  # -> ready -> stopping -> stopped; /healthz reports it
        self.metrics = PrometheusMetrics()
        self.db = Database(settings.data_dir / "bot.db")
        self.sessions = SessionStore(self.db)
        self.outbox = OutboxStore(self.db)
        self.bus = DurableBus(InboxStore(self.db), self.outbox)
        self.workspaces = Workspaces(settings.data_dir / "workspaces")
        self.tools = build_registry()
        self._llm = build_model(settings) if model is None else None
        self.model: ChatModel = model if model is not None else self._llm  # type: ignore[assignment]
        if self._llm is not None:
            self._llm.on_attempt = self.metrics.model_call
        self.scheduler = ReminderScheduler(
            ReminderStore(self.db),
            self.bus,
            grace=timedelta(hours=settings.reminders.missed_grace_h),
        )
        self.reminders = ReminderService(
            ReminderStore(self.db),
            UserSettingsStore(self.db),
            self.scheduler,
            default_timezone=settings.timezone,
            max_active_per_user=settings.reminders.max_active_per_user,
        )
        self.commands = CommandRouter()
        register_reminder_commands(self.commands, self.reminders)
        self.commands.register(weather_command(settings, lambda: self.http, self._user_timezone))
        self.http: aiohttp.ClientSession | None = None
        self.services: dict[str, Any] = {
            "settings": settings,
            "sessions": self.sessions,
            "outbox": self.outbox,
            "reminders": self.reminders,
        }
        self.channels: dict[str, Channel] = {c.name: c for c in channels}
        self.services["channels"] = self.channels  # e.g. TelegramChannel.download for tools
        self.delivery = Delivery(
            self.outbox,
            self.channels,
            max_concurrent=settings.agent.max_concurrent_chats,
            metrics=self.metrics,
        )
        self.access = AccessControl(
            self.bus,
            allow_from={
                name: getattr(settings.channels, name).allow_from
                for name in type(settings.channels).model_fields
            },
            admins=settings.admins,
            trusted_channels=[c.name for c in channels if c.trusted],
        )
        self.runner = AgentRunner(
            self.model,
            CountingToolBox(self.tools, self.metrics),
            self.sessions,
            self.workspaces,
            timezone=self._user_timezone,
            max_steps=settings.llm.max_steps,
            context=settings.context,
            model_name=settings.llm.model,
            services=self.services,
        )
        self.turns = TurnHandler(
            bus=self.bus,
            commands=self.commands,
            runner=self.runner,
            channels=self.channels,
            metrics=self.metrics,
        )
        self.dispatcher = Dispatcher(
            self.bus,
            self.handle,
            max_concurrent=settings.agent.max_concurrent_chats,
            idle_s=settings.agent.worker_idle_s,
            filters=[
                self.access,
                SizeGuard(self.bus, settings.agent.max_message_chars),
            ],
        )
        self._tasks: list[asyncio.Task[Any]] = []
        self._stopping = asyncio.Event()
        self.ready_s: float | None = None
        bind_metrics(
            self.metrics,
            scheduler=self.scheduler,
            dispatcher=self.dispatcher,
            outbox=self.outbox,
            channels=self.channels,
        )
        web = settings.web
        self.web = (
            WebServer(web.host, web.port, health=self.health, metrics=self.metrics.render)
            if (web.enabled if serve_web is None else serve_web)
            else None
        )

    async def start(self) -> None:
        started = time.perf_counter()
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
        self.http = aiohttp.ClientSession()
        self.services["http"] = self.http
        scheduled = await self.scheduler.start()
        if self._llm is not None:
            self._llm.start_warmup()
        self._tasks.append(asyncio.create_task(self.delivery.route(self.bus), name="outbound"))
        self._tasks.append(asyncio.create_task(self.dispatcher.run(), name="dispatcher"))
        up: list[str] = []
        for channel in list(self.channels.values()):
            try:
                await channel.start(self.bus)
                up.append(channel.name)
            except ChannelError as exc:
                log.error("channel %s failed to start: %s", channel.name, exc)
        inbound, outbound = await self.bus.replay()
        if inbound or outbound:
            log.info(
                "resuming %d unanswered messages and %d undelivered replies", inbound, outbound
            )
        self.ready_s = time.perf_counter() - started
        self.state = "ready"
        log.info(
            "ready: channels=%s model=%s reminders=%d data_dir=%s web=%s (%.0f ms)",
            ",".join(up) or "none",
            self.settings.llm.model,
            scheduled,
            self.settings.data_dir,
            self.web.url if self.web is not None else "off",
            self.ready_s * 1000,
        )

    async def health(self) -> Health:
        return await probe_health(
            state=self.state,
            writable=self.db.writable,
            channels={name: channel.connected for name, channel in self.channels.items()},
        )

    async def handle(self, msg: InboundMessage) -> None:
        """One turn (see :class:`bot.handlers.turn.TurnHandler`); the dispatcher's handler."""
        await self.turns.handle(msg)

    async def _user_timezone(self, msg: InboundMessage) -> str:
        return await self.reminders.user_timezone(msg.key.channel, msg.user_id)

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
        self.scheduler.stop()
        finished = await self.dispatcher.drain(timeout)
        if not finished:
            log.warning("turns unfinished after %.1f s; they resume at the next start", timeout)
        await self.delivery.take_remaining(self.bus)
        if not await self.delivery.drain(timeout=5.0):
            log.warning("some replies not delivered at shutdown; they stay in the outbox")
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        for channel in self.channels.values():
            try:
                await channel.stop()
            except Exception:
                log.exception("channel %s did not stop cleanly", channel.name)
        if self.web is not None:
            await self.web.stop()
        if self.http is not None:
            await self.http.close()
        await self.db.close()
        self.state = "stopped"
        log.info("stopped")


def install_signal_handlers(daemon: Daemon) -> None:
    stop_on_signals(daemon.request_stop)
