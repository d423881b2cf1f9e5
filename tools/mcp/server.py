"""One configured MCP server: its connection, its tools, its state and its counters.

Nothing a server does escapes this class as an exception into a turn: a call on a
connection already known dead reconnects once and is sent; a call whose connection died
while the server had it is sent again only when the tool says repeating it is safe
(MCP's ``readOnlyHint`` or ``idempotentHint``), because the server may have done it
already; a timeout, an error answer or a server that
cannot be reached becomes a :class:`~tools.mcp.results.CallOutcome` with
``is_error``. Connecting at start is retried in the background with exponential
backoff, each failed attempt giving the next one longer to handshake (up to
:data:`MAX_PATIENCE` times ``connect_timeout_s``): a server always a little slower than
the timeout (a loaded machine, a cold ``npx``) connects in the end instead of never;
``notifications/tools/list_changed`` re-lists the tools and tells the owner
(a server repeating it many times over costs a re-listing or two, not one each).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bot.config.mcp import MCPServerSettings
from bot.errors import MCPConnectionLost as ConnectionLost
from bot.errors import MCPServerError as ServerError
from bot.errors import MCPTimeout as RequestTimedOut
from bot.ops.redaction import REDACTOR
from tools.mcp.results import CallOutcome, render_result

if TYPE_CHECKING:  # the SDK costs a second to import: only when a server is configured
    from tools.mcp.connection import Connection

log = logging.getLogger(__name__)

MAX_PAGES = 50  # a server whose tools/list cursor never ends is cut off here


@dataclass(frozen=True, slots=True)
class RemoteTool:
    """One tool as the server listed it (raw, not yet cleaned)."""

    name: str
    description: str
    input_schema: Any
    read_only: bool
    idempotent: bool = False  # ``idempotentHint``: calling it twice does no more than once

    @property
    def repeatable(self) -> bool:
        """Safe to send again after a connection died with the call in flight."""
        return self.read_only or self.idempotent


@dataclass
class Counters:
    calls: int = 0
    errors: int = 0
    timeouts: int = 0
    reconnects: int = 0


MAX_PATIENCE = 4  # the longest handshake a retry allows, in connect_timeout_s
SILENT_LIMIT = 2  # timed-out requests in a row (the last a ping) that mean a lost connection


@dataclass
class ServerState:
    state: str = "idle"  # idle -> connecting -> ready | failed (retrying) -> stopped
    detail: str = ""
    attempts: int = 0
    tools: list[RemoteTool] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # enabled_tools the server lists not


class MCPServer:
    """``on_tools`` is called with the new tool list after every successful listing."""

    def __init__(
        self,
        name: str,
        settings: MCPServerSettings,
        on_tools: Callable[[MCPServer], None],
        *,
        retry_initial_s: float = 1.0,
        retry_max_s: float = 60.0,
        ping_interval_s: float = 30.0,
        max_result_chars: int = 100_000,
    ) -> None:
        self.name = name
        self.max_result_chars = max_result_chars
        self.settings = settings
        self.counters = Counters()
        self.status = ServerState()
        self._on_tools = on_tools
        self._retry = (retry_initial_s, retry_max_s)
        self._patience = 1  # x connect_timeout_s for the next connect; doubles per failure
        self._conn: Connection | None = None
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopped = False
        self._retrying: asyncio.Task[None] | None = None
        self._watching: asyncio.Task[None] | None = None
        self._relisting: asyncio.Task[None] | None = None
        self._relist_wanted = False
        self._ping_s = ping_interval_s
        self._silent = 0  # requests in a row that timed out (see _ping)
        self._in_flight = 0  # calls sent and not yet answered

    @property
    def state(self) -> str:
        detail = f": {self.status.detail}" if self.status.detail else ""
        return f"{self.status.state}{detail}"

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        """Connect in the background, retrying with backoff until it works or stops."""
        if self._retrying is None or self._retrying.done():
            self._retrying = self._spawn(self._connect_until_up())

    async def _connect_until_up(self) -> None:
        delay, ceiling = self._retry
        while not self._stopped:
            if await self.connect():
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, ceiling)

    async def connect(self) -> bool:
        """One attempt: connect and list the tools. False (state ``failed``) on failure."""
        async with self._lock:
            if self._conn is not None and not self._conn.lost:
                return True
            return await self._reconnect_locked()

    async def _reconnect_locked(self) -> bool:
        if self._stopped:
            return False
        old, self._conn = self._conn, None
        if old is not None:
            await old.close()
        self.status.state, self.status.detail = "connecting", ""
        self.status.attempts += 1
        from tools.mcp.connection import Connection

        conn = Connection(self.name, self.settings, self._notification)
        handshake_s = self.settings.connect_timeout_s * self._patience
        try:
            await conn.open(handshake_s)
            tools = await self._list(conn, handshake_s)
        except Exception as exc:  # whatever a server does, the daemon carries on
            await conn.close()
            self._patience = min(self._patience * 2, MAX_PATIENCE)
            # Shown on /healthz and the admin page: an error quoting the URL is masked.
            detail = REDACTOR(str(exc)) or type(exc).__name__
            self.status.state, self.status.detail = "failed", detail
            expected = isinstance(exc, ConnectionLost | RequestTimedOut | ServerError)
            log.warning(
                "MCP server %s: cannot connect (attempt %d): %s",
                self.name,
                self.status.attempts,
                self.status.detail,
                exc_info=not expected,
            )
            return False
        if self._stopped:  # stop() ran while this connected: leave nothing behind
            await conn.close()
            return False
        self._conn, self._patience = conn, 1
        if self._watching is None or self._watching.done():
            self._watching = self._spawn(self._watch())
        self.status.state, self.status.detail, self.status.tools = "ready", "", tools
        log.info("MCP server %s: connected, %d tools", self.name, len(tools))
        self._on_tools(self)
        return True

    async def _watch(self) -> None:
        """Ping an idle connection, so a dead child or an expired HTTP session is found
        (and replaced) before a call needs it, and /healthz tells the truth."""
        while not self._stopped:
            await asyncio.sleep(self._ping_s)
            conn = self._conn
            if conn is not None:
                await self._ping(conn)

    async def _ping(self, conn: Connection) -> None:
        """One ping. A connection that answers nothing (:data:`SILENT_LIMIT` pings or
        calls in a row timed out, the last a ping) is lost: its stream may be wedged
        while the process lives on, and waiting would fail every call for good. A ping
        unanswered while a call is in flight is not counted: the server may be busy."""
        busy = self._in_flight > 0
        try:
            await conn.request("ping", None, self.settings.connect_timeout_s)
        except ConnectionLost:
            await self._reconnect_after(conn)
            return
        except RequestTimedOut:
            if busy or self._in_flight or conn is not self._conn:
                return
            self._silent += 1
            if self._silent >= SILENT_LIMIT:
                why = f"{self._silent} requests in a row went unanswered (the last a ping)"
                await self._reconnect_after(conn, why)
            return
        except ServerError:
            pass  # a server without ping: it answered all the same
        self._silent = 0

    async def stop(self) -> None:
        """Close the session and end the child process; pending work is cancelled."""
        self._stopped = True
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()
        self.status.state, self.status.detail = "stopped", ""

    def _spawn(self, coro: Any, what: str = "background") -> asyncio.Task[None]:
        task = asyncio.create_task(coro, name=f"mcp:{self.name}:{what}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- tools -------------------------------------------------------------------------

    async def _list(self, conn: Connection, timeout_s: float | None = None) -> list[RemoteTool]:
        """Every page of ``tools/list``, read leniently: one odd entry is skipped alone."""
        tools: list[RemoteTool] = []
        cursor: str | None = None
        wait_s = timeout_s or self.settings.connect_timeout_s
        for _ in range(MAX_PAGES):
            params = {"cursor": cursor} if cursor else None
            raw = await conn.request("tools/list", params, wait_s)
            entries = raw.get("tools")
            for entry in entries if isinstance(entries, list) else []:
                tool = self._remote_tool(entry)
                if tool is not None:
                    tools.append(tool)
            cursor = raw.get("nextCursor") if isinstance(raw.get("nextCursor"), str) else None
            if not cursor:
                break
        wanted = self.settings.enabled_tools
        if wanted is None:
            return tools
        unknown = sorted(set(wanted) - {t.name for t in tools})
        self.status.unknown = unknown
        if unknown:
            log.warning("MCP server %s lists no tool named %s", self.name, ", ".join(unknown))
        return [t for t in tools if t.name in wanted]

    def _remote_tool(self, entry: Any) -> RemoteTool | None:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name:
            log.warning("MCP server %s: skipped a tool without a name: %.200r", self.name, entry)
            return None
        annotations = entry.get("annotations")
        hints = annotations if isinstance(annotations, dict) else {}
        description = entry.get("description")
        return RemoteTool(
            name=name,
            description=description if isinstance(description, str) else "",
            input_schema=entry.get("inputSchema"),
            read_only=hints.get("readOnlyHint") is True,
            idempotent=hints.get("idempotentHint") is True,
        )

    def _notification(self, message: Any) -> None:
        """``tools/list_changed``: one re-listing at a time, and one more after it when
        the list changed again meanwhile, however many times the server says so."""
        if getattr(message, "method", None) != "notifications/tools/list_changed":
            return
        self._relist_wanted = True
        if self._relisting is None or self._relisting.done():
            self._relisting = self._spawn(self._relist_while_wanted(), "relist")

    async def _relist_while_wanted(self) -> None:
        while self._relist_wanted and not self._stopped:
            self._relist_wanted = False
            await self.refresh()

    async def refresh(self) -> None:
        """Re-list the tools (after ``tools/list_changed``); a failure keeps the old list."""
        conn = self._conn
        if conn is None or conn.lost:
            return
        try:
            tools = await self._list(conn)
        except Exception as exc:
            log.warning("MCP server %s: re-listing tools failed: %s", self.name, exc)
            return
        self.status.tools = tools
        log.info("MCP server %s: tool list changed, %d tools", self.name, len(tools))
        self._on_tools(self)

    # -- calls -------------------------------------------------------------------------

    async def call(
        self, tool: str, arguments: dict[str, Any], *, repeatable: bool = False
    ) -> CallOutcome:
        """One ``tools/call``; a lost connection is re-made and the call sent once more
        when it never reached the server, or when ``repeatable`` (see the module)."""
        self.counters.calls += 1
        outcome = await self._call_once(tool, arguments, retry=True, repeatable=repeatable)
        if outcome.is_error:
            self.counters.errors += 1
        return outcome

    async def _call_once(
        self, tool: str, arguments: dict[str, Any], *, retry: bool, repeatable: bool
    ) -> CallOutcome:
        timeout = self.settings.tool_timeout_s
        conn = self._conn
        sent = False
        try:
            if conn is None or conn.lost:
                raise ConnectionLost(self.status.detail or "not connected")
            sent = True
            raw = await self._request(conn, "tools/call", {"name": tool, "arguments": arguments})
        except RequestTimedOut:
            self.counters.timeouts += 1
            self._silent += 1
            if conn is not None:  # is it busy, or gone? A ping says at once.
                self._spawn(self._ping(conn), "ping")
            return CallOutcome(
                f"MCP tool '{tool}' on server '{self.name}' did not answer within {timeout:g} s",
                True,
            )
        except ServerError as exc:
            return CallOutcome(f"MCP server '{self.name}' refused the call: {exc}", True)
        except ConnectionLost as exc:
            if sent and not repeatable:
                self._spawn(self._reconnect_after(conn))  # for the next call, not this one
                log.warning(
                    "MCP server %s: connection lost during a call of %s; not sent again "
                    "(the tool is neither readOnlyHint nor idempotentHint)",
                    self.name,
                    tool,
                )
                return CallOutcome(
                    f"MCP server '{self.name}' went away during the call of '{tool}' ({exc}); "
                    "it may or may not have been done, and it is not safe to repeat "
                    "automatically: check before calling it again",
                    True,
                )
            if retry and await self._reconnect_after(conn):
                return await self._call_once(tool, arguments, retry=False, repeatable=repeatable)
            return CallOutcome(f"MCP server '{self.name}' is unavailable ({exc})", True)
        return render_result(raw, self.max_result_chars)

    async def _request(self, conn: Connection, method: str, params: dict[str, Any]) -> Any:
        """A call's request, counted while in flight; an answer shows the server alive."""
        self._in_flight += 1
        try:
            raw = await conn.request(method, params, self.settings.tool_timeout_s)
        except ServerError:
            self._silent = 0
            raise
        finally:
            self._in_flight -= 1
        self._silent = 0
        return raw

    async def _reconnect_after(
        self, broken: Connection | None, why: str = "connection lost"
    ) -> bool:
        """Reconnect unless another call already replaced ``broken``."""
        async with self._lock:
            if self._conn is not None and self._conn is not broken and not self._conn.lost:
                return True
            self.counters.reconnects += 1
            self._silent = 0
            log.warning("MCP server %s: %s; reconnecting", self.name, why)
            if await self._reconnect_locked():
                return True
        self.start()  # keep trying in the background; the next call may find it back
        return False
