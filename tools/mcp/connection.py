"""One live session with one MCP server, through the official SDK's transports.

The SDK's ``ClientSession`` does the handshake and routes notifications; requests
after it go through the session's dispatcher as raw JSON-RPC, because the typed
``list_tools``/``call_tool`` validate a whole ``tools/list`` answer and refuse all of
it when one tool's schema is ``{}`` (``call_tool`` even re-lists internally). Reading
the raw result lets one bad tool be skipped alone (see :mod:`tools.schema`).

anyio's context managers must be left in the task that entered them, so each
connection lives in a task of its own (:meth:`Connection.open` starts it, closing
ends it); any other task sends requests through the dispatcher.

A stdio child gets only the SDK's fixed allowlist of harmless variables (``HOME``,
``LOGNAME``, ``PATH``, ``SHELL``, ``TERM``, ``USER``) plus the ``env`` its config
names, never the daemon's environment, so no model or platform key leaks into it. Its
stderr goes to the daemon's log (:mod:`tools.mcp.stderr`), never onto the terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession, IncomingMessage
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp_types.jsonrpc import CONNECTION_CLOSED, REQUEST_TIMEOUT

from bot.config.mcp import MCPServerSettings
from bot.errors import MCPConnectionLost as ConnectionLost
from bot.errors import MCPServerError as ServerError
from bot.errors import MCPTimeout as RequestTimedOut
from tools.mcp.stderr import ServerStderr, stderr_to_log

log = logging.getLogger(__name__)

CLIENT_INFO = types.Implementation(name="bot", version="1")
# An HTTP session the server no longer knows (restart, idle expiry) answers 404: the SDK
# says "Session terminated", or passes the server's own JSON-RPC error body on.
_LOST_MESSAGES = (
    "session terminated",
    "session not found",
    "session expired",
    "unknown session",
    "connection closed",
)
MAX_SAID = 300  # characters of a child's last stderr lines in a failure's detail
_STATUS_HINTS = {
    401: "check the server's headers/token",
    403: "check the server's headers/token and what it allows",
}


def _transport(
    name: str, settings: MCPServerSettings, seen: _Seen
) -> AbstractAsyncContextManager[Any]:
    if settings.transport == "stdio":
        params = StdioServerParameters(
            command=settings.command,
            args=settings.args,
            env={k: v.get_secret_value() for k, v in settings.env.items()},
            cwd=settings.cwd,
            # One byte that is not UTF-8 ("strict") ended the SDK's stdout reader for
            # good while the child lived on: every later request waited out its timeout.
            encoding_error_handler="replace",
        )
        return _stdio(name, params, seen)
    headers = {k: v.get_secret_value() for k, v in settings.headers.items()}
    if settings.transport == "sse":
        return sse_client(settings.url, headers=headers, timeout=settings.connect_timeout_s)
    return _http(settings.url, headers, seen)


@dataclass
class _Seen:
    """What a transport saw that the SDK's error leaves out, for a failed handshake."""

    stderr: ServerStderr | None = None  # a stdio child's, with its last lines
    status: int | None = None  # the last HTTP error status answered


@contextlib.asynccontextmanager
async def _stdio(name: str, params: StdioServerParameters, seen: _Seen) -> AsyncIterator[Any]:
    """The child, its stderr going to the log (:mod:`tools.mcp.stderr`), not ours."""
    async with stderr_to_log(name) as stderr:
        seen.stderr = stderr
        async with stdio_client(params, errlog=stderr.writer) as streams:
            stderr.spawned()
            yield streams


@contextlib.asynccontextmanager
async def _http(url: str, headers: dict[str, str], seen: _Seen) -> AsyncIterator[Any]:
    async def status(response: Any) -> None:
        if response.status_code >= 400:
            seen.status = response.status_code

    async with create_mcp_http_client(headers=headers) as client:
        # The SDK turns 401, 403 and 500 alike into "Server returned an error response".
        client.event_hooks["response"].append(status)
        async with streamable_http_client(url, http_client=client) as streams:
            yield streams


class Connection:
    """A connected session; ``on_notification`` sees every server notification."""

    def __init__(
        self,
        name: str,
        settings: MCPServerSettings,
        on_notification: Callable[[types.ServerNotification], None],
    ) -> None:
        self.name = name
        self._settings = settings
        self._on_notification = on_notification
        self._dispatcher: JSONRPCDispatcher[Any] | None = None
        self._headers: dict[str, str] = {}
        self._ready: asyncio.Future[None] | None = None
        self._closing = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._seen = _Seen()
        self.lost = False

    async def open(self, timeout_s: float | None = None) -> None:
        """Connect and handshake within ``timeout_s`` (``connect_timeout_s`` unless a
        retry allows more); raises ConnectionLost."""
        wait_s = timeout_s or self._settings.connect_timeout_s
        self._ready = asyncio.get_running_loop().create_future()
        # Read the outcome even when no one waits any more (a timed-out open), so asyncio
        # never logs "exception was never retrieved".
        self._ready.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._task = asyncio.create_task(self._serve(), name=f"mcp:{self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), wait_s)
        except TimeoutError:
            await self.close()
            raise ConnectionLost(f"no handshake within {wait_s:g} s") from None
        except BaseException:
            await self.close()
            raise

    async def _serve(self) -> None:
        assert self._ready is not None
        try:
            async with self._transport() as (read, write):
                dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(read, write)
                session = ClientSession(
                    dispatcher=dispatcher,
                    message_handler=self._message,
                    client_info=CLIENT_INFO,
                )
                async with session:
                    result = await session.initialize()
                    self._headers = {MCP_PROTOCOL_VERSION_HEADER: result.protocol_version}
                    self._dispatcher = dispatcher
                    self._ready.set_result(None)
                    await self._closing.wait()
        except Exception as exc:
            if not self._ready.done():
                self._ready.set_exception(ConnectionLost(self._why_not_ready(exc)))
            elif not self._closing.is_set():
                log.warning("MCP server %s: connection ended: %s", self.name, _describe(exc))
        finally:
            self.lost = True
            if not self._ready.done():
                self._ready.set_exception(ConnectionLost("the connection closed at start"))

    def _transport(self) -> AbstractAsyncContextManager[Any]:
        return _transport(self.name, self._settings, self._seen)

    def _why_not_ready(self, exc: BaseException) -> str:
        """The handshake's failure, with what the SDK's error leaves out: the HTTP
        status, or that a stdio child exited and the last it said on stderr."""
        text = _describe(exc)
        status = self._seen.status
        if status is not None:
            return f"{_http_status(status)} ({text})"
        stderr = self._seen.stderr
        if stderr is None or not _is_closed(exc):
            return text
        said = " | ".join(stderr.tail())
        said = f"{said[:MAX_SAID]}..." if len(said) > MAX_SAID else said
        return (
            f"the server exited at start; its stderr: {said}"
            if said
            else ("the server exited at start, saying nothing on stderr")
        )

    async def _message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):  # junk on stdout, a broken stream: logged, survived
            log.warning("MCP server %s sent something unreadable: %s", self.name, message)
            return
        self._on_notification(message)

    async def request(
        self, method: str, params: Mapping[str, Any] | None, timeout: float
    ) -> dict[str, Any]:
        """The raw result of one request, or ConnectionLost/RequestTimedOut/ServerError."""
        if self._dispatcher is None or self.lost:
            raise ConnectionLost("not connected")
        opts: Any = {"timeout": timeout, "headers": dict(self._headers)}
        try:
            return await self._dispatcher.send_raw_request(method, params, opts)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise RequestTimedOut(f"no answer within {timeout:g} s") from None
            if exc.code == CONNECTION_CLOSED or _looks_lost(exc.error.message):
                self.lost = True
                raise ConnectionLost(exc.error.message) from None
            raise ServerError(exc.error.message) from None
        except (OSError, RuntimeError) as exc:  # a transport that fell over mid-request
            self.lost = True
            raise ConnectionLost(_describe(exc)) from None

    async def close(self) -> None:
        """End the session; a stdio child is stopped (and killed when it lingers)."""
        self._closing.set()
        self.lost = True
        task, self._task = self._task, None
        if task is None or task.done():
            return
        if self._dispatcher is None:
            task.cancel()  # still handshaking: nothing to close gracefully
        # Waited on, never awaited: awaiting a task our own cancel ended raises its
        # CancelledError here, which ended the server's retrying for good (a server
        # slower than connect_timeout_s stayed "connecting" forever).
        if not (await asyncio.wait({task}, timeout=10))[0]:
            task.cancel()
            await asyncio.wait({task}, timeout=10)


def _is_closed(exc: BaseException) -> bool:
    """``Connection closed``: the child's stdout ended (it exited) before the answer."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED


def _http_status(status: int) -> str:
    """``HTTP 401 Unauthorized: check the server's headers/token``."""
    try:
        named = f"HTTP {status} {HTTPStatus(status).phrase}"
    except ValueError:  # a status no standard names
        named = f"HTTP {status}"
    default = "the server failed: see its logs" if status >= 500 else "check the server's url"
    hint = _STATUS_HINTS.get(status, default)
    return f"{named}: {hint}"


def _looks_lost(message: str) -> bool:
    lowered = message.lower()
    return any(text in lowered for text in _LOST_MESSAGES)


def _describe(exc: BaseException) -> str:
    """One line for an exception (and the first of an exception group's)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text != type(exc).__name__ else text
