"""The one web app on ``[web] host:port``: ``/healthz``, ``/metrics``, ``/status`` (for
``bot status``: :mod:`bot.ops.status`), channels' webhooks and the admin page
(``/admin``, :mod:`bot.admin`, when enabled).

It runs on the daemon's own event loop (an aiohttp ``AppRunner``), so a health answer
proves the loop is responsive; it stays off the hot path because nothing in a turn
touches it, and each request does only a database probe or a registry render.
``/healthz`` is 200 only when the daemon is ready, the database is writable, every
long-lived task is running and every enabled channel works (its own report,
:func:`channels.base.channel_health`); otherwise 503 naming what failed, as JSON.
Optional parts (MCP servers) are listed with their state but never fail it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from aiohttp import web

from bot.errors import ConfigError, StoreError
from bot.ops.redaction import redacted
from channels.base import Route

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 4 * 1024 * 1024  # a webhook update is far smaller
PROBE_TIMEOUT_S = 2.0  # a database that does not answer within this is reported failing


@dataclass(frozen=True, slots=True)
class Health:
    """One health verdict: every part named, with ``ok`` or the reason it fails.

    ``info`` parts are optional: shown with their state, never counted as failing.
    """

    parts: Mapping[str, str] = field(default_factory=dict)
    info: Mapping[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(state == "ok" for state in self.parts.values())

    def body(self) -> dict[str, object]:
        failing = [name for name, state in self.parts.items() if state != "ok"]
        status = "ok" if not failing else "failing"
        return {"status": status, "failing": failing, **self.info, **self.parts}


async def probe_health(
    *,
    state: str,
    writable: Callable[[], Awaitable[bool]],
    channels: Mapping[str, str],
    tasks: Mapping[str, str] | None = None,
    timeout: float | None = None,
    info: Mapping[str, str] | None = None,
    checks: Mapping[str, str] | None = None,
    watch: PartWatch | None = None,
) -> Health:
    """``state`` is the daemon's lifecycle (``ready`` is healthy); ``channels`` and
    ``tasks``: name -> ``ok`` or why that channel or long-lived task does not work;
    ``checks``: any other part by its name (``cluster``: replicas that disagree);
    ``watch``: where the database part's turns are logged (default: this process's)."""
    timeout = PROBE_TIMEOUT_S if timeout is None else timeout
    parts: dict[str, str] = {
        "daemon": "ok" if state == "ready" else state,
        # Answering at all is the proof: this coroutine runs on the daemon's own loop.
        "loop": "ok",
    }
    parts["database"] = await _database(writable, timeout)
    if state == "ready":  # starting or stopping, a closed database is no news
        (watch or DATABASE_WATCH).note(parts["database"])
    for name, task_state in sorted((tasks or {}).items()):
        parts[f"task:{name}"] = task_state
    for name, channel_state in sorted(channels.items()):
        parts[f"channel:{name}"] = channel_state
    parts.update(checks or {})
    return Health(parts, dict(sorted((info or {}).items())))


async def _database(writable: Callable[[], Awaitable[bool]], timeout: float) -> str:
    """The database part: ``ok``, or why a row cannot be committed (SQLite's words)."""
    try:
        ok = await asyncio.wait_for(writable(), timeout)
    except TimeoutError:
        return f"no answer within {timeout:g} s"
    except StoreError as exc:
        return f"not writable: {exc}"
    return "ok" if ok else "not writable"


class PartWatch:
    """A health part's turns, each logged once: failing (a WARNING with why) and working
    again (INFO). A stalled database answered 503 for as long as it lasted, and the log
    said nothing; the channels' links log theirs the same way (channels.health)."""

    def __init__(self, name: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self._clock = clock
        self._since: float | None = None  # when it turned failing; None while ok

    def note(self, state: str) -> None:
        if state != "ok" and self._since is None:
            self._since = self._clock()
            log.warning("%s failing: %s; /healthz answers 503 until it works", self.name, state)
        elif state == "ok" and self._since is not None:
            failed_for, self._since = self._clock() - self._since, None
            log.info("%s works again (failing for %.0f s)", self.name, failed_for)


DATABASE_WATCH = PartWatch("database")  # one daemon per process


class WebServer:
    """Binds at :meth:`start`; ``port`` is the bound one (``[web] port = 0`` picks one)."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        health: Callable[[], Awaitable[Health]],
        metrics: Callable[[], Awaitable[bytes]],
        status: Callable[[], Awaitable[Mapping[str, object]]] | None = None,
        routes: Sequence[Route] = (),
    ) -> None:
        self.host = host
        self.port = port
        self._health = health
        self._metrics = metrics
        self._status = status
        self._routes = list(routes)
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def build_app(self) -> web.Application:
        """The app :meth:`start` serves (tests drive it with aiohttp's test client)."""
        app = web.Application(client_max_size=MAX_BODY_BYTES)
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/metrics", self._metrics_view)
        if self._status is not None:
            app.router.add_get("/status", self._status_view)
        # Channels' webhooks and the admin page share the one app and port.
        for route in self._routes:
            app.router.add_route(route.method, route.path, route.handler)
        return app

    async def start(self) -> None:
        runner = web.AppRunner(self.build_app(), access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, self.port).start()
        except OSError as exc:
            await runner.cleanup()
            raise ConfigError(
                f"key 'web.port': cannot listen on {self.host}:{self.port} for /healthz,"
                f" /metrics and webhooks ({exc.strerror or exc}); choose another port or set"
                " web.enabled = false"
            ) from None
        self._runner = runner
        self.port = int(runner.addresses[0][1])
        log.info("serving /healthz, /metrics and /status on %s", self.url)

    async def stop(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    async def _healthz(self, request: web.Request) -> web.Response:
        started = time.perf_counter()
        health = await self._health()
        body = health.body()
        body["took_ms"] = round((time.perf_counter() - started) * 1000, 1)
        return web.json_response(redacted(body), status=200 if health.ok else 503)

    async def _status_view(self, request: web.Request) -> web.Response:
        report = await self._status() if self._status is not None else {}
        return web.json_response(redacted(dict(report)))

    async def _metrics_view(self, request: web.Request) -> web.Response:
        payload = await self._metrics()
        from prometheus_client import CONTENT_TYPE_LATEST  # loaded by the render

        return web.Response(body=payload, headers={"Content-Type": CONTENT_TYPE_LATEST})
