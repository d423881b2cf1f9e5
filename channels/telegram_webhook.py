"""The webhook receiver: a small aiohttp server instead of PTB's tornado-based one.

Telegram retries a delivery until it gets a 2xx, so the handler answers 200 only after
the update is journaled (the handler awaits ``put_inbound``) and 500 when that failed.
A request without the configured secret token is refused with 403 before it is read.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"

UpdateHandler = Callable[[dict[str, Any]], Awaitable[None]]


class WebhookServer:
    def __init__(self, path: str, secret: str, handler: UpdateHandler, host: str, port: int):
        self._path = path or "/"
        self._secret = secret.encode()
        self._handler = handler
        self._host = host
        self._port = port
        self._runner: web.AppRunner | None = None

    @property
    def port(self) -> int:
        """The bound port (useful when configured as 0)."""
        if self._runner is None or not self._runner.addresses:
            return self._port
        return int(self._runner.addresses[0][1])

    @property
    def running(self) -> bool:
        return self._runner is not None

    async def start(self) -> None:
        app = web.Application(client_max_size=4 * 1024 * 1024)
        app.router.add_post(self._path, self._handle)
        self._runner = web.AppRunner(app, shutdown_timeout=1.0, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, self._host, self._port).start()
        log.info("telegram webhook listening on %s:%d%s", self._host, self.port, self._path)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _handle(self, request: web.Request) -> web.Response:
        given = request.headers.get(SECRET_HEADER, "").encode()
        if not hmac.compare_digest(given, self._secret):
            log.warning("webhook request from %s with a wrong secret refused", request.remote)
            return web.Response(status=403, text="forbidden")
        try:
            data = json.loads(await request.read())
        except ValueError:
            return web.Response(status=400, text="invalid JSON")
        if not isinstance(data, dict):
            return web.Response(status=400, text="not an update")
        try:
            await self._handler(data)
        except Exception:
            log.exception(
                "webhook update %s not accepted; Telegram will resend it", data.get("update_id")
            )
            return web.Response(status=500, text="not accepted")
        return web.Response(text="ok")
