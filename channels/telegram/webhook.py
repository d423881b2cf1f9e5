"""The webhook route: mounted on the daemon's shared web app (``[web]`` host and port).

Telegram retries a delivery until it gets a 2xx, so the handler answers 200 only after
the update is journaled (it awaits ``put_inbound``) and 500 when that failed. A request
without the configured secret token is refused with 403 before its body is read, and
logged at most once a minute (anyone can send them; ``channels.refusals`` counts them).
A body that is not a JSON object, or nests too deep to parse, is a 400: Telegram would
resend a 500 forever.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from channels.refusals import Refusals

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"

UpdateHandler = Callable[[dict[str, Any]], Awaitable[None]]


class TelegramWebhook:
    """The handler of ``POST <webhook path>``; ``accepting`` is set while the channel runs."""

    def __init__(self, path: str, secret: str, handler: UpdateHandler) -> None:
        self.path = path or "/"
        self._secret = secret.encode()
        self._handler = handler
        self.accepting = False
        self.refusals = Refusals(log, "webhook request with a wrong secret")

    async def handle(self, request: web.Request) -> web.Response:
        # A header that is not valid UTF-8 arrives with surrogate escapes: compare its bytes.
        given = request.headers.get(SECRET_HEADER, "").encode("utf-8", "surrogateescape")
        if not hmac.compare_digest(given, self._secret):
            self.refusals.refused(request.remote)
            return web.Response(status=403, text="forbidden")
        if not self.accepting:
            return web.Response(status=503, text="not started")
        try:
            data = json.loads(await request.read())
        except (ValueError, RecursionError):
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
