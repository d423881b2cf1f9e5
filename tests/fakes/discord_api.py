"""A fake Discord on loopback: REST API and gateway WebSocket, for the REAL discord.py.

discord.py talks to it over real HTTP and a real WebSocket (the adapter points
``Route.BASE`` and ``DiscordWebSocket.DEFAULT_GATEWAY`` here), so login, IDENTIFY,
READY, heartbeats, RESUME, invalid sessions, rate limits and payload encoding are all
the library's own code::

    async with FakeDiscord() as dc:
        dc.api_base, dc.gateway_url          # for DiscordSettings
        guild = dc.add_guild()               # a server with one text channel
        dc.user_message("hi")                # a DM pushed as MESSAGE_CREATE
        dc.fail("POST /channels/{channel_id}/messages", 429, retry_after=0.05)
        dc.limit(EDIT, 5, per_s=5.0)         # a real bucket: 5 edits per 5 s per channel
        await dc.wait_posts(1)               # POST /channels/{id}/messages, decoded
        await dc.drop()                      # close the socket: the client RESUMEs
        await dc.ask_to_reconnect()          # op 7 RECONNECT: the client RESUMEs
        await dc.invalidate()                # op 9 d=false: the client IDENTIFYs afresh
        dc.user_message("hi", live=False)    # said while no client listened: history only

Every message (a user's, pushed or not, and the bot's posts) is kept per channel, so
``GET /channels/{id}/messages`` (before / after / limit) answers as Discord does, newest
first; ``at`` (epoch seconds) dates a message in the past, id and timestamp alike.
A post's nonce is Discord's too: in the answer to the POST only, never in the history
(Discord does not store it), and with ``enforce_nonce`` a repeat returns the first
message only within ``nonce_window_s`` (Discord: "a few minutes"; 0: a restart after it).

What the gateway sent while no client was connected is replayed on RESUME, as
Discord does; an IDENTIFY starts a new session (the backlog is gone).

Message routes answer with Discord's rate-limit headers (``X-RateLimit-Limit``,
``-Remaining``, ``-Reset``, ``-Reset-After``, ``-Bucket``), counted per route and
channel in fixed windows (generous unless :meth:`FakeDiscord.limit` says otherwise);
a request over the limit gets Discord's 429: ``retry_after`` in the body, the same
headers, ``X-RateLimit-Scope: user`` and ``Via`` (without it discord.py assumes a ban).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest_asyncio
from aiohttp import WSMsgType, web

from bot.messages import InboundMessage
from channels.base import CatchUpWindow
from tests.fakes.loopback import LoopbackServer
from tests.fakes.waiting import STEP_S

if TYPE_CHECKING:
    from channels.discord.adapter import DiscordChannel

DISCORD_EPOCH_MS = 1_420_070_400_000
POST = "POST /channels/{channel_id}/messages"
EDIT = "PATCH /channels/{channel_id}/messages/{message_id}"
DELETE = "DELETE /channels/{channel_id}/messages/{message_id}"
DEFAULT_LIMIT = (50, 1.0)  # requests per window (s) of a message route when not limited
MESSAGE_CONTENT = 1 << 15
_snowflakes = itertools.count(1)
Handler = Callable[[web.Request, dict[str, Any]], Any]


def snowflake(at: float | None = None) -> int:
    """A real-looking Discord id: milliseconds since 2015 in the high bits (created_at)."""
    ms = int((time.time() if at is None else at) * 1000)
    return ((ms - DISCORD_EPOCH_MS) << 22) + next(_snowflakes) % 4096


def now_iso(at: float | None = None) -> str:
    return datetime.fromtimestamp(time.time() if at is None else at, UTC).isoformat()


def user(user_id: int, name: str, *, bot: bool = False) -> dict[str, Any]:
    return {
        "id": str(user_id),
        "username": name,
        "global_name": name.title(),
        "discriminator": "0",
        "avatar": None,
        "bot": bot,
    }


@dataclass(frozen=True, slots=True)
class Call:
    """One REST request: ``route`` like ``"POST /channels/{channel_id}/messages"``."""

    route: str
    params: dict[str, str]
    json: dict[str, Any]
    headers: dict[str, str]
    files: dict[str, bytes] = field(default_factory=dict)
    ok: bool = True  # False when a scripted failure answered it
    at: float = field(default_factory=time.monotonic)


@dataclass(frozen=True, slots=True)
class Failure:
    status: int
    retry_after: float | None = None
    via: bool = True  # Discord's own 429s carry Via; without it discord.py assumes Cloudflare
    at: int = 0  # applies from the route's call number ``at`` on (0-based)
    global_: bool = False  # a 429 of the global limit (every route waits)
    match: Callable[[dict[str, Any]], bool] | None = None  # only requests whose body it accepts
    code: int = 0  # Discord's JSON error code (50001 Missing Access, 10003 Unknown Channel)


@dataclass(slots=True)
class Bucket:
    """One rate-limit bucket (a route in one channel): a fixed window of ``limit``."""

    limit: int
    per_s: float
    used: int = 0
    resets_at: float = 0.0  # monotonic; 0: no window open

    def take(self) -> float:
        """Count one request; the seconds to wait instead when the window is full."""
        now = time.monotonic()
        if now >= self.resets_at:
            self.used, self.resets_at = 0, now + self.per_s
        if self.used >= self.limit:
            return self.resets_at - now
        self.used += 1
        return 0.0

    def headers(self, route: str) -> dict[str, str]:
        after = max(0.0, self.resets_at - time.monotonic())
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(max(0, self.limit - self.used)),
            "X-RateLimit-Reset": f"{time.time() + after:.3f}",
            "X-RateLimit-Reset-After": f"{after:.3f}",
            "X-RateLimit-Bucket": uuid.uuid5(uuid.NAMESPACE_URL, route).hex[:16],
        }


def respond(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    """JSON as Discord sends it: discord.py parses only ``Content-Type: application/json``."""
    return web.Response(
        body=json.dumps(data).encode(),
        status=status,
        headers={"Content-Type": "application/json", **(headers or {})},
    )


class FakeDiscord(LoopbackServer):
    def __init__(
        self, token: str = "discord-test-token", bot_id: int = 1001, username: str = "testbot"
    ) -> None:
        self.token = token
        self.bot_id = bot_id
        self.bot_user = user(bot_id, username, bot=True)
        self.guilds: dict[int, dict[str, Any]] = {}
        self.calls: list[Call] = []
        self.frames: list[dict[str, Any]] = []  # what clients sent on the gateway
        self.files: dict[str, bytes] = {}  # CDN path -> bytes
        self.history: dict[int, list[dict[str, Any]]] = {}  # channel id -> messages
        self.grant_content = True  # False: IDENTIFY with the content intent -> close 4014
        self.session_id: str | None = None
        self._seq = 0
        self._backlog: list[dict[str, Any]] = []  # dispatches of the gateway session, for RESUME
        self._live: web.WebSocketResponse | None = None
        self._sockets: set[web.WebSocketResponse] = set()
        self._failures: dict[str, deque[Failure]] = {}
        self._changed = asyncio.Condition()
        self._send_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        # enforced nonce -> (the message made, when); honoured for nonce_window_s
        self.nonces: dict[str, tuple[dict[str, Any], float]] = {}
        self.nonce_window_s = 300.0
        self.created: list[dict[str, Any]] = []  # messages made (a repeated nonce makes none)
        # Called with each created message once made, before it is answered.
        self.after_post: Callable[[dict[str, Any]], None] | None = None
        self._limits: dict[str, tuple[int, float]] = {}  # route -> (limit, window s)
        self._buckets: dict[tuple[str, str], Bucket] = {}  # (route, channel id)
        self.rate_limited: list[Call] = []  # requests answered 429 by a bucket

    # -- addresses -------------------------------------------------------------------
    @property
    def api_base(self) -> str:
        return f"{self.root}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    def add_routes(self, app: web.Application) -> None:
        api = "/api/v10"
        app.router.add_get("/gateway", self._gateway)
        app.router.add_get("/cdn/{path:.+}", self._cdn)
        for method, path, handler in (
            ("GET", "/gateway/bot", self._gateway_bot),
            ("GET", "/users/@me", self._me),
            ("GET", "/oauth2/applications/@me", self._application),
            ("GET", "/channels/{channel_id}", self._get_channel),
            ("GET", "/channels/{channel_id}/messages", self._list_messages),
            ("POST", "/channels/{channel_id}/messages", self._create_message),
            ("PATCH", "/channels/{channel_id}/messages/{message_id}", self._edit_message),
            ("DELETE", "/channels/{channel_id}/messages/{message_id}", self._delete_message),
            ("POST", "/channels/{channel_id}/typing", self._no_content),
            ("PUT", "/channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me",
             self._no_content),
            ("DELETE", "/channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me",
             self._no_content),
        ):  # fmt: skip
            app.router.add_route(method, api + path, self._rest(f"{method} {path}", handler))

    # -- scripting: servers, channels, threads, messages -------------------------------
    def add_guild(self, name: str = "Test Server", channel_name: str = "general") -> int:
        """A server (sent in GUILD_CREATE on every IDENTIFY) with one text channel."""
        gid = snowflake()
        everyone = {"id": str(gid), "name": "@everyone", "permissions": "0", "position": 0,
                    "color": 0, "hoist": False, "managed": False, "mentionable": False}  # fmt: skip
        self.guilds[gid] = {
            "id": str(gid), "name": name, "unavailable": False, "large": False,
            "member_count": 2, "joined_at": now_iso(), "roles": [everyone], "channels": [],
            "threads": [], "members": [], "emojis": [], "stickers": [], "features": [],
            "voice_states": [], "presences": [], "stage_instances": [],
            "guild_scheduled_events": [], "soundboard_sounds": [],
        }  # fmt: skip
        self.add_channel(gid, channel_name)
        return gid

    def add_channel(self, guild_id: int, name: str) -> int:
        cid = snowflake()
        self.guilds[guild_id]["channels"].append(
            {"id": str(cid), "type": 0, "name": name, "position": 0, "guild_id": str(guild_id),
             "permission_overwrites": [], "nsfw": False, "topic": None}
        )  # fmt: skip
        return cid

    def add_role(self, guild_id: int, name: str) -> int:
        rid = snowflake()
        self.guilds[guild_id]["roles"].append(
            {"id": str(rid), "name": name, "permissions": "0", "position": 1, "color": 0,
             "hoist": False, "managed": False, "mentionable": True}
        )  # fmt: skip
        return rid

    def channel_of(self, guild_id: int) -> int:
        """The first text channel of a server."""
        return int(self.guilds[guild_id]["channels"][0]["id"])

    def add_thread(
        self, guild_id: int, parent_id: int, *, bot_member: bool, owner_id: int = 7
    ) -> int:
        """An active thread; ``bot_member`` is whether the bot has joined it."""
        tid = snowflake()
        thread: dict[str, Any] = {
            "id": str(tid), "guild_id": str(guild_id), "parent_id": str(parent_id),
            "owner_id": str(owner_id), "name": f"thread-{tid}", "type": 11,
            "message_count": 0, "member_count": 1,
            "thread_metadata": {"archived": False, "auto_archive_duration": 1440,
                                "archive_timestamp": now_iso(), "locked": False},
        }  # fmt: skip
        if bot_member:
            thread["member"] = {"id": str(tid), "user_id": str(self.bot_id),
                                "join_timestamp": now_iso(), "flags": 0}  # fmt: skip
        self.guilds[guild_id]["threads"].append(thread)
        self.dispatch("THREAD_CREATE", {**thread, "newly_created": True})
        return tid

    def message_payload(
        self,
        content: str,
        *,
        channel_id: int = 4242,
        guild_id: int | None = None,
        author: dict[str, Any] | None = None,
        mentions: tuple[dict[str, Any], ...] = (),
        at: float | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """A MESSAGE_CREATE payload from a human (``author``) unless ``fields`` say otherwise."""
        data: dict[str, Any] = {
            "id": str(snowflake(at)), "channel_id": str(channel_id),
            "author": author or user(7, "alice"), "content": content, "timestamp": now_iso(at),
            "edited_timestamp": None, "tts": False, "mention_everyone": False,
            "mentions": list(mentions), "mention_roles": [], "attachments": [], "embeds": [],
            "pinned": False, "type": 0, "flags": 0,
        }  # fmt: skip
        if guild_id is not None:
            data["guild_id"] = str(guild_id)
        if "referenced_message" in fields:
            ref = fields["referenced_message"]
            data["type"] = 19
            data["message_reference"] = {"message_id": ref["id"], "channel_id": ref["channel_id"]}
        data.update(fields)
        return data

    def user_message(self, content: str, *, live: bool = True, **kw: Any) -> dict[str, Any]:
        """Push a MESSAGE_CREATE (a DM on channel 4242 unless ``guild_id``); returns it.
        ``live=False``: only kept in the channel's history (said while nobody listened)."""
        data = self.message_payload(content, **kw)
        self.history.setdefault(int(data["channel_id"]), []).append(data)
        if live:
            self.dispatch("MESSAGE_CREATE", data)
        return data

    def mention_of_bot(self) -> dict[str, Any]:
        return dict(self.bot_user)

    def bot_said(self, content: str, channel_id: int) -> dict[str, Any]:
        """A message the bot posted earlier (for a user to reply to)."""
        return self.message_payload(content, channel_id=channel_id, author=dict(self.bot_user))

    def add_file(self, name: str, data: bytes) -> str:
        """A CDN file; returns its URL (what an attachment's ``url`` would be)."""
        self.files[name] = data
        return f"{self.root}/cdn/{name}"

    def fail(
        self,
        route: str,
        status: int,
        *,
        retry_after: float | None = None,
        via: bool = True,
        times: int = 1,
        after: int = 0,
        global_: bool = False,
        match: Callable[[dict[str, Any]], bool] | None = None,
        code: int = 0,
    ) -> None:
        """The next ``times`` requests to ``route`` (e.g. "POST /channels/{channel_id}/messages")
        are answered with ``status`` (a 429 carries ``retry_after`` and, unless ``via`` is
        False, the ``Via`` header Discord's real rate limits have); ``after`` lets that
        many requests succeed first; ``match``: only requests whose JSON body it accepts;
        ``code``: the JSON error code the refusal carries."""
        queue = self._failures.setdefault(route, deque())
        at = len(self.calls_to(route)) + after
        failure = Failure(status, retry_after, via, at, global_, match, code)
        queue.extend(failure for _ in range(times))

    def limit(self, route: str, limit: int, *, per_s: float) -> None:
        """``route`` allows ``limit`` requests per ``per_s`` seconds in each channel."""
        self._limits[route] = (limit, per_s)

    # -- scripting: the gateway --------------------------------------------------------
    def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send a dispatch (op 0) in the gateway session; kept for a RESUME if no client is live."""
        self._seq += 1
        frame = {"op": 0, "t": event, "s": self._seq, "d": data}
        self._backlog.append(frame)
        if self._live is not None and not self._live.closed:
            self._spawn(self._send(self._live, frame))

    async def drop(self, code: int = 4000) -> None:
        """Close every client socket (4000 "unknown error": Discord expects a RESUME)."""
        self._live = None
        for ws in list(self._sockets):
            await ws.close(code=code)

    async def ask_to_reconnect(self) -> None:
        """op 7 RECONNECT: the client must close and RESUME on a new socket."""
        live, self._live = self._live, None
        if live is not None and not live.closed:
            await self._send(live, {"op": 7, "d": None})

    async def invalidate(self, *, resumable: bool = False) -> None:
        """op 9 d=false: the session is gone; the client must IDENTIFY again.
        ``resumable`` (d=true): the session is kept; the client RESUMEs it."""
        if not resumable:
            self.session_id = None
        live, self._live = self._live, None
        if live is not None and not live.closed:
            await self._send(live, {"op": 9, "d": resumable})

    # -- inspection ------------------------------------------------------------------
    def calls_to(self, route: str) -> list[Call]:
        return [c for c in self.calls if c.route == route]

    def count(self, *routes: str, channel_id: int | None = None) -> int:
        """Requests made to any of ``routes`` (refused ones included), in one channel."""
        return sum(
            1
            for c in self.calls
            if c.route in routes
            and (channel_id is None or c.params.get("channel_id") == str(channel_id))
        )

    def message(self, channel_id: int, message_id: int | str) -> dict[str, Any] | None:
        """A stored message as it reads now (edits applied; None once deleted)."""
        return next(
            (m for m in self.history.get(int(channel_id), []) if m["id"] == str(message_id)),
            None,
        )

    def posts(self, channel_id: int | None = None) -> list[Call]:
        """Messages created successfully (scripted failures are not counted)."""
        return [
            c
            for c in self.calls_to("POST /channels/{channel_id}/messages")
            if c.ok and (channel_id is None or c.params["channel_id"] == str(channel_id))
        ]

    def ops(self, op: int) -> list[dict[str, Any]]:
        """Gateway frames clients sent with this opcode (2 IDENTIFY, 6 RESUME, 1 heartbeat)."""
        return [f for f in self.frames if f.get("op") == op]

    async def wait_until(self, predicate: Callable[[], bool], timeout: float = STEP_S) -> None:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(predicate), timeout)

    async def wait_posts(self, n: int = 1, timeout: float = STEP_S, **kw: Any) -> list[Call]:
        await self.wait_until(lambda: len(self.posts(**kw)) >= n, timeout)
        return self.posts(**kw)

    async def wait_calls(self, route: str, n: int = 1, timeout: float = STEP_S) -> list[Call]:
        await self.wait_until(lambda: len(self.calls_to(route)) >= n, timeout)
        return self.calls_to(route)

    async def wait_op(self, op: int, n: int = 1, timeout: float = STEP_S) -> list[dict[str, Any]]:
        await self.wait_until(lambda: len(self.ops(op)) >= n, timeout)
        return self.ops(op)

    async def wait_session(self, timeout: float = STEP_S) -> None:
        """Until a client holds a live session (after READY or RESUMED was sent)."""
        await self.wait_until(lambda: self._live is not None and not self._live.closed, timeout)

    # -- server: gateway -------------------------------------------------------------
    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, ws: web.WebSocketResponse, frame: dict[str, Any]) -> None:
        """Frames go out one at a time, in the order they were queued."""
        async with self._send_lock:
            if not ws.closed:
                await ws.send_str(json.dumps(frame))

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.add(ws)
        await self._send(ws, {"op": 10, "d": {"heartbeat_interval": 41250}})
        try:
            async for msg in ws:
                if msg.type is WSMsgType.TEXT:
                    await self._on_frame(ws, json.loads(msg.data))
        finally:
            self._sockets.discard(ws)
            if self._live is ws:
                self._live = None
            await self._notify()
        return ws

    async def _on_frame(self, ws: web.WebSocketResponse, frame: dict[str, Any]) -> None:
        async with self._changed:
            self.frames.append(frame)
            self._changed.notify_all()
        op, data = frame.get("op"), frame.get("d") or {}
        if op == 1:
            await self._send(ws, {"op": 11})
        elif op == 2:
            await self._identify(ws, data)
        elif op == 6:
            await self._resume(ws, data)

    async def _identify(self, ws: web.WebSocketResponse, data: dict[str, Any]) -> None:
        if data.get("token") != self.token:
            await ws.close(code=4004, message=b"Authentication failed.")
            return
        if not self.grant_content and int(data.get("intents", 0)) & MESSAGE_CONTENT:
            await ws.close(code=4014, message=b"Disallowed intent(s).")
            return
        self.session_id, self._seq, self._backlog = uuid.uuid4().hex, 0, []
        self._live = ws
        self.dispatch(
            "READY",
            {"v": 10, "user": self.bot_user, "session_id": self.session_id,
             "resume_gateway_url": self.gateway_url,
             "guilds": [{"id": str(gid), "unavailable": True} for gid in self.guilds],
             "application": {"id": str(self.bot_id), "flags": 0}},
        )  # fmt: skip
        for guild in self.guilds.values():
            self.dispatch("GUILD_CREATE", guild)
        await self._notify()

    async def _resume(self, ws: web.WebSocketResponse, data: dict[str, Any]) -> None:
        if self.session_id is None or data.get("session_id") != self.session_id:
            await self._send(ws, {"op": 9, "d": False})
            return
        seen = int(data.get("seq") or 0)
        self._live = ws
        for frame in [f for f in self._backlog if f["s"] > seen]:
            await self._send(ws, frame)
        self.dispatch("RESUMED", {})
        await self._notify()

    # -- server: REST ----------------------------------------------------------------
    def _rest(self, route: str, handler: Handler) -> Callable[[web.Request], Any]:
        async def serve(request: web.Request) -> web.Response:
            if request.headers.get("Authorization") != f"Bot {self.token}":
                return respond({"message": "401: Unauthorized", "code": 0}, 401)
            body, files = await _body(request)
            failures = self._failures.get(route, deque())
            due = failures and failures[0].at <= len(self.calls_to(route))
            due = due and (failures[0].match is None or failures[0].match(body))
            failure = failures.popleft() if due else None
            bucket = self._bucket(route, request.match_info.get("channel_id"))
            wait = bucket.take() if bucket is not None and failure is None else 0.0
            call = Call(route, dict(request.match_info), body, dict(request.headers), files,
                        ok=failure is None and not wait)  # fmt: skip
            async with self._changed:
                self.calls.append(call)
                if wait:
                    self.rate_limited.append(call)
                self._changed.notify_all()
            limits = bucket.headers(route) if bucket is not None else {}
            if wait:
                return _failed(Failure(429, retry_after=wait), limits)
            if failure is not None:
                return _failed(failure, limits)
            result: web.Response = await handler(request, body)
            result.headers.update(limits)
            return result

        return serve

    def _bucket(self, route: str, channel_id: str | None) -> Bucket | None:
        """Message routes count per channel, as Discord's buckets do."""
        path = route.split(" ", 1)[1]
        if channel_id is None or not path.startswith("/channels/{channel_id}/messages"):
            return None
        found = self._buckets.get((route, channel_id))
        if found is None:
            limit, per_s = self._limits.get(route, DEFAULT_LIMIT)
            found = self._buckets[(route, channel_id)] = Bucket(limit, per_s)
        return found

    async def _gateway_bot(self, request: web.Request, body: dict[str, Any]) -> web.Response:
        limit = {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}
        return respond({"url": self.gateway_url, "shards": 1, "session_start_limit": limit})

    async def _me(self, request: web.Request, body: dict[str, Any]) -> web.Response:
        return respond(self.bot_user)

    async def _application(self, request: web.Request, body: dict[str, Any]) -> web.Response:
        return respond(
            {"id": str(self.bot_id), "name": "Test App", "description": "", "icon": None,
             "bot_public": False, "bot_require_code_grant": False, "verify_key": "0" * 64,
             "owner": user(1, "owner"), "flags": 0}
        )  # fmt: skip

    async def _create_message(self, request: web.Request, body: dict[str, Any]) -> web.Response:
        """With ``enforce_nonce``, a nonce seen within ``nonce_window_s`` returns the
        message it made instead of creating another. The nonce is echoed in this answer
        only: the stored message (history, ``created``) has none, as on Discord."""
        once = str(body["nonce"]) if body.get("enforce_nonce") and "nonce" in body else None
        seen = self.nonces.get(once) if once is not None else None
        if seen is not None and time.monotonic() - seen[1] < self.nonce_window_s:
            return respond({**seen[0], "nonce": once})
        data = self.message_payload(
            body.get("content") or "",
            channel_id=int(request.match_info["channel_id"]),
            author=dict(self.bot_user),
        )
        if "message_reference" in body:
            data["type"] = 19
            data["message_reference"] = body["message_reference"]
        data["attachments"] = [
            {"id": str(snowflake()), "filename": a.get("filename", ""), "size": 0,
             "url": f"{self.root}/cdn/{a.get('filename', '')}",
             "proxy_url": f"{self.root}/cdn/{a.get('filename', '')}"}
            for a in body.get("attachments", [])
        ]  # fmt: skip
        if once is not None:
            self.nonces[once] = (data, time.monotonic())
        self.created.append(data)
        self.history.setdefault(int(data["channel_id"]), []).append(data)
        if self.after_post is not None:
            self.after_post(data)
        return respond({**data, "nonce": once} if once is not None else data)

    def channel_payload(self, channel_id: int) -> dict[str, Any]:
        """A server channel or thread by id; any other id is a DM with alice."""
        for guild in self.guilds.values():
            for found in (*guild["channels"], *guild["threads"]):
                if int(found["id"]) == channel_id:
                    return dict(found)
        return {"id": str(channel_id), "type": 1, "recipients": [user(7, "alice")]}

    async def _get_channel(self, request: web.Request, body: dict[str, Any]) -> web.Response:
        return respond(self.channel_payload(int(request.match_info["channel_id"])))

    async def _list_messages(self, request: web.Request, body: dict[str, Any]) -> web.Response:
        """Newest first, as Discord: the ``limit`` oldest after ``after``, else the
        ``limit`` newest (before ``before``)."""
        q = request.query
        found = sorted(self.history.get(int(request.match_info["channel_id"]), []),
                       key=lambda m: int(m["id"]))  # fmt: skip
        if "before" in q:
            found = [m for m in found if int(m["id"]) < int(q["before"])]
        limit = int(q.get("limit", 50))
        if "after" in q:
            found = [m for m in found if int(m["id"]) > int(q["after"])][:limit]
        else:
            found = found[-limit:]
        return respond(list(reversed(found)))

    async def _edit_message(self, request: web.Request, body: dict[str, Any]) -> web.Response:
        match = request.match_info
        found = self.message(int(match["channel_id"]), match["message_id"])
        if found is None:
            return respond({"message": "Unknown Message", "code": 10008}, 404)
        if "content" in body:
            found["content"] = body.get("content") or ""
        found["edited_timestamp"] = now_iso()
        return respond(found)

    async def _delete_message(self, request: web.Request, body: dict[str, Any]) -> web.Response:
        channel_id = int(request.match_info["channel_id"])
        found = self.message(channel_id, request.match_info["message_id"])
        if found is None:
            return respond({"message": "Unknown Message", "code": 10008}, 404)
        self.history[channel_id].remove(found)
        return web.Response(status=204)

    async def _no_content(self, request: web.Request, body: dict[str, Any]) -> web.Response:
        return web.Response(status=204)

    async def _cdn(self, request: web.Request) -> web.Response:
        data = self.files.get(request.match_info["path"])
        if data is None:
            return respond({"message": "404: Not Found", "code": 0}, 404)
        return web.Response(body=data, content_type="application/octet-stream")


async def _body(request: web.Request) -> tuple[dict[str, Any], dict[str, bytes]]:
    """JSON body, or discord.py's multipart upload (``payload_json`` + ``files[n]``)."""
    if request.content_type.startswith("multipart/"):
        form = await request.post()
        files: dict[str, bytes] = {}
        payload: dict[str, Any] = {}
        for name, value in form.items():
            if isinstance(value, web.FileField):
                files[value.filename] = value.file.read()
            elif name == "payload_json":
                payload = json.loads(str(value))
        return payload, files
    if request.can_read_body:
        raw = await request.read()
        return (json.loads(raw) if raw else {}), {}
    return {}, {}


def _failed(failure: Failure, limits: dict[str, str] | None = None) -> web.Response:
    if failure.status != 429:
        return respond({"message": f"{failure.status}: scripted failure", "code": failure.code},
                       failure.status, limits)  # fmt: skip
    retry_after = failure.retry_after or 0.05
    body = {"message": "You are being rate limited.", "retry_after": retry_after,
            "global": failure.global_}  # fmt: skip
    headers = {**(limits or {}), "Retry-After": f"{retry_after:g}",
               "X-RateLimit-Scope": "global" if failure.global_ else "user"}  # fmt: skip
    if failure.global_:
        headers["X-RateLimit-Global"] = "true"
    if limits:
        headers["X-RateLimit-Remaining"] = "0"
        headers["X-RateLimit-Reset-After"] = f"{retry_after:.3f}"
    if failure.via:
        headers["Via"] = "1.1 google"
    return respond(body, 429, headers)


class Inbox:
    """The ``put_inbound`` a test starts the adapter with: collects turns, awaitable."""

    def __init__(self) -> None:
        self.messages: list[InboundMessage] = []
        self._changed = asyncio.Condition()

    async def put(self, msg: InboundMessage) -> None:
        async with self._changed:
            self.messages.append(msg)
            self._changed.notify_all()

    async def wait(self, n: int = 1, timeout: float = STEP_S) -> list[InboundMessage]:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: len(self.messages) >= n), timeout)
        return self.messages


@pytest_asyncio.fixture
async def fake_discord() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as fake:
        yield fake


DiscordFactory = Callable[..., Awaitable[tuple["DiscordChannel", Inbox]]]


@pytest_asyncio.fixture
async def discord_channel(fake_discord: FakeDiscord) -> AsyncIterator[DiscordFactory]:
    """Start real DiscordChannels against the fake (tiny identify delay and guild wait)."""
    from channels.discord.adapter import DiscordChannel
    from channels.discord.settings import DiscordSettings

    started: list[DiscordChannel] = []

    async def factory(
        ready: bool = True,
        state: Any = None,
        window: CatchUpWindow | None = None,
        **settings: Any,
    ) -> tuple[DiscordChannel, Inbox]:
        settings.setdefault("token", fake_discord.token)
        settings.setdefault("api_base", fake_discord.api_base)
        channel = DiscordChannel(
            DiscordSettings(**settings), state=state, identify_delay_s=0.01,
            guild_ready_timeout=0.05,
        )  # fmt: skip
        if window is not None:
            channel.catch_up_within(window)
        inbox = Inbox()
        started.append(channel)
        await channel.start(inbox.put)
        if ready:  # READY and every GUILD_CREATE handled
            await asyncio.wait_for(channel.client.wait_until_ready(), STEP_S)
        return channel, inbox

    yield factory
    for channel in started:
        await channel.stop()
