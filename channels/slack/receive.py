"""Receiving: one slack-bolt AsyncApp fed by Socket Mode, the HTTP Events API, or both.

``process_before_response=True`` makes Bolt run the listener *before* it acknowledges:
the listener awaits the channel's handler (which journals the message through
``put_inbound``), so Slack gets its ack (HTTP 200 / the envelope ack) only once the
message is durable, and a failure answers 500 / no ack so Slack delivers it again.
``put_inbound`` returns fast, so this stays far inside Slack's 3-second budget.

An HTTP request's signature and timestamp (at most 5 minutes off) are checked before
its body is even parsed (401 otherwise; anyone can send those, so ``channels.refusals``
logs them at most once a minute, with a count); Bolt then answers ``url_verification``
and dispatches. One catch-all listener takes every event type, so an event we do not use is
still acknowledged instead of being retried by Slack.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_sdk.errors import SlackApiError
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from channels.health import LinkHealth
from channels.reconnects import Reconnects
from channels.refusals import Refusals
from channels.slack.normalize import BotIdentity

log = logging.getLogger(__name__)

BodyHandler = Callable[[dict[str, Any]], Awaitable[None]]

SOCKET_LOGGER = "channels.slack.socket"  # the logger slack_sdk's Socket Mode client is given
SDK_WEB_LOGGER = "slack_sdk.web.async_base_client"  # its apps.connections.open retries
# How slack_sdk's aiohttp Socket Mode client words a failed attempt, a new session, and
# the lines it says around each reconnect.
SOCKET_FAILED = (
    "Failed to connect",
    "Failed to check the current session",
    "Failed to receive or enqueue a message",
    "Failed to retrieve WSS URL",
    "Failed to send a ping message",
)
SOCKET_UP = ("A new session (",)
SOCKET_NOISE = (
    "The session (",
    "Received CLOSE event",
    "The old session (",
    "The aiohttp client session is closed",
    "A retry handler found",  # SDK_WEB_LOGGER: only the socket's tasks' calls are taken
)


class SlackReceiver:
    """The Bolt app, its HTTP route handler and (when started) its Socket Mode handler."""

    def __init__(
        self,
        client: AsyncWebClient,
        signing_secret: str,
        bot_token: str,
        on_body: BodyHandler,
    ) -> None:
        self._on_body = on_body
        self.identity: BotIdentity | None = None  # set by the channel once auth.test answered
        self.accepting = False
        self._verifier = SignatureVerifier(signing_secret) if signing_secret else None
        self.refusals = Refusals(log, "slack event with a bad or stale signature")
        self.socket: AsyncSocketModeHandler | None = None
        self._connecting: asyncio.Task[None] | None = None
        # slack_sdk logs every failed reconnect (an ERROR, two INFO lines, every ping
        # interval): folded into ``link``, one degraded line and one recovered line.
        self.link = LinkHealth("slack", "Socket Mode connection", degrade_after=1)
        self._reconnects = Reconnects(
            [SOCKET_LOGGER, SDK_WEB_LOGGER],
            self.link,
            failed=SOCKET_FAILED,
            up=SOCKET_UP,
            noise=SOCKET_NOISE,
        )

        async def authorize(**_: Any) -> AuthorizeResult:
            # The identity is already known (auth.test at start): no second auth.test,
            # and no event silently acked with an "install the app" answer if it failed.
            me = self.identity
            if me is None:
                raise RuntimeError("slack channel not started")
            return AuthorizeResult(
                enterprise_id=None,
                team_id=me.team_id,
                bot_token=bot_token,
                bot_id=me.bot_id,
                bot_user_id=me.user_id,
            )

        self.app = AsyncApp(
            client=client,
            authorize=authorize,
            signing_secret=signing_secret,
            request_verification_enabled=bool(signing_secret),
            process_before_response=True,
            logger=logging.getLogger("channels.slack.bolt"),
        )
        self.app.event(re.compile(".*"))(self._listener)

    async def _listener(self, body: dict[str, Any]) -> None:
        await self._on_body(body)

    async def handle_http(self, request: web.Request) -> web.Response:
        """``POST <http_path>``: signature and age checked first (401, nothing read
        further), then Bolt answers url_verification or dispatches the event."""
        if not self.accepting:
            return web.Response(status=503, text="not started")
        raw = await request.read()
        if not self._signed(raw, request.headers):
            self.refusals.refused(request.remote)
            return web.Response(status=401, text="invalid request")
        retry = request.headers.get("X-Slack-Retry-Num")
        if retry:
            reason = request.headers.get("X-Slack-Retry-Reason", "?")
            log.info("slack redelivery %s (%s); the inbox drops a duplicate", retry, reason)
        try:
            bolt_request = await to_bolt_request(request)
        except ValueError:
            return web.Response(status=400, text="invalid body")
        return await to_aiohttp_response(await self.app.async_dispatch(bolt_request))

    def _signed(self, raw: bytes, headers: Mapping[str, str]) -> bool:
        if self._verifier is None:
            return False
        try:
            return self._verifier.is_valid_request(raw, headers)
        except ValueError:  # a timestamp that is not a number
            return False

    async def start_socket(self, app_token: str, ping_interval: float, wait_s: float) -> None:
        """Open the one Socket Mode connection; the SDK closes the old socket before it
        reconnects, so a reconnect never leaves two.

        The first URL is asked for here, so a refused app token fails the start (raises
        SlackApiError). Then the connection itself is awaited, up to ``wait_s``: the
        daemon's ``ready:`` names the channels that are up, and Slack delivers nothing
        until the socket is open. Past that (Slack unreachable) it keeps connecting, and
        retrying, in the background.
        """
        self.socket = AsyncSocketModeHandler(
            self.app,
            app_token,
            logger=logging.getLogger(SOCKET_LOGGER),
            ping_interval=ping_interval,
        )
        client = self.socket.client
        try:
            with self._reconnects.owning():
                client.wss_uri = await client.issue_new_wss_url()
        except (aiohttp.ClientError, TimeoutError) as exc:  # connect() below keeps retrying
            self.link.failed(f"unreachable ({type(exc).__name__}: {exc})")
        except SlackApiError:
            await self.stop()  # a refused app token: nothing left running
            raise
        connect = self.socket.connect_async()  # type: ignore[no-untyped-call]
        self._connecting = self._reconnects.task(connect, "slack-socket")
        try:  # connect() returns once the socket is open (it retries until then)
            await asyncio.wait_for(asyncio.shield(self._connecting), wait_s)
        except TimeoutError:
            log.warning("slack socket mode not connected after %.0f s; still trying", wait_s)

    @property
    def socket_up(self) -> bool:
        if self.socket is None:
            return False
        client = self.socket.client
        session = client.current_session
        return not client.closed and session is not None and not session.closed

    async def stop(self) -> None:
        self.accepting = False
        if self._connecting is not None:
            self._connecting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._connecting
            self._connecting = None
        if self.socket is not None:
            await self.socket.close_async()  # type: ignore[no-untyped-call]
            self.socket = None
        self._reconnects.detach()
