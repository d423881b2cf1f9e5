"""A scriptable fake Slack on loopback, for the REAL slack-bolt / slack_sdk.

One server plays the Web API (``api_url``), the Socket Mode WebSocket that
``apps.connections.open`` points to, and the sender of signed HTTP events::

    async with FakeSlack() as slack:
        slack.api_url                               # for channels.slack.api_url
        ev = slack.message("hi")                    # a DM event (stored as history too)
        env = await slack.push(ev)                  # Socket Mode: an events_api envelope
        await slack.wait_acked(env)
        await post_signed(url, slack.body(ev), slack.signing_secret)   # HTTP Events API
        slack.fail("chat.postMessage", 429, retry_after=0.1)
        slack.reset_after_accept("chat.postMessage")  # stored, then the connection dies
        await slack.drop_sockets()                  # the server closes every socket
        slack.posts(channel="D1")                   # what the bot posted
        slack.streaming = False                     # chat.startStream refused (fallback)
        slack.count("chat.update")                  # calls made (429s included)

Streaming (chat.startStream / appendStream / stopStream) follows Slack's documented
methods: a stream is a thread reply (``thread_ts`` required; outside DMs
``recipient_team_id`` and ``recipient_user_id`` too) whose text grows with each append
until it is stopped (``metadata`` may be set then); appending to a stopped stream is
``message_not_in_streaming_state``.

Messages live per channel with their thread, metadata and reactions, so
conversations.history / conversations.replies answer like Slack's (oldest / latest /
inclusive / include_all_metadata).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import itertools
import json
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

import aiohttp
import pytest_asyncio
from aiohttp import web

from bot.messages import InboundMessage
from channels.base import CatchUpWindow, Route
from tests.fakes.loopback import LoopbackServer
from tests.fakes.waiting import STEP_S

TEAM = "T0TEAM"
BOT_USER = "U0BOT"
BOT_ID = "B0BOT"
USER = "U0ALICE"
# The adapters' Socket Mode ping interval here (10 s in production). slack_sdk gives it
# to aiohttp as the heartbeat, which closes a socket whose pong is late by half of it: at
# 0.2 s a 100 ms stall of the test process (a first import of litellm holding the GIL, a
# loaded CI machine) dropped the socket with an event in flight on it, never acknowledged.
PING_INTERVAL_S = 1.0

_JSON_FIELDS = {"metadata", "blocks", "attachments", "chunks", "files"}


@dataclass(frozen=True, slots=True)
class Call:
    method: str
    params: dict[str, Any]
    token: str
    ok: bool = True  # False when a scripted failure answered it
    at: float = field(default_factory=time.monotonic)


@dataclass(frozen=True, slots=True)
class Failure:
    status: int
    error: str
    retry_after: float | None = None
    reset: bool = False  # accept the call, then drop the connection before answering
    skip: int = 0  # calls let through before this failure applies
    accept: bool = True  # with reset: carry the call out before the connection dies
    match: Callable[[dict[str, Any]], bool] | None = None  # only calls it accepts


def _truthy(value: Any) -> bool:
    return value in (True, 1, "1", "true", "True")


class FakeSlack(LoopbackServer):
    def __init__(
        self,
        bot_token: str = "xoxb-test-token",
        app_token: str = "xapp-test-token",
        signing_secret: str = "test-signing-secret",
    ) -> None:
        self.bot_token = bot_token
        self.app_token = app_token
        self.signing_secret = signing_secret
        self.calls: list[Call] = []
        self.connections: set[Any] = set()  # (host, port) of each client connection used
        self.messages: dict[str, list[dict[str, Any]]] = {}  # channel -> messages
        self.reactions: set[tuple[str, str, str]] = set()  # (channel, ts, name)
        self.sockets: list[web.WebSocketResponse] = []  # open Socket Mode connections
        self.sockets_opened = 0
        self.socket_attempts = 0  # WebSocket upgrades asked for, opened or not
        self.socket_gate: asyncio.Event | None = None  # set: upgrades wait until it is
        self.max_open_sockets = 0
        self.acks: list[dict[str, Any]] = []
        self._transports: dict[web.WebSocketResponse, asyncio.Transport] = {}
        self._undelivered: deque[str] = deque()
        self._failures: dict[str, deque[Failure]] = {}
        self._last_ts = 0.0
        self._event_ids = itertools.count(1)
        self._turn = 0  # the connection deliver() hands the next event to
        self._changed = asyncio.Condition()
        # Called with each post once stored, before it is answered (a crash mid-post).
        self.after_post: Callable[[dict[str, Any]], None] | None = None
        # False: this workspace does not offer chat.startStream (it answers this error).
        self.streaming = True
        self.streaming_error = "unknown_method"
        self.streams: set[tuple[str, str]] = set()  # (channel, ts) still streaming
        self.files: dict[str, tuple[dict[str, Any], bytes]] = {}  # id -> (file object, bytes)
        self.file_fetches: list[tuple[str, str]] = []  # (file id, Authorization header)
        self.uploaded: dict[str, bytes] = {}  # upload URL's file id -> bytes received
        self.shared: list[dict[str, Any]] = []  # files.completeUploadExternal calls
        self._file_ids = itertools.count(1)

    # -- lifecycle ---------------------------------------------------------------------
    @property
    def api_url(self) -> str:
        return f"{self.root}/api/"

    def add_routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_get("/socket", self._socket)
        app.router.add_get("/files-pri/{id}/{name}", self._file)
        app.router.add_post("/upload/v1/{id}", self._upload)

    async def stop(self) -> None:
        for ws in list(self.sockets):
            await ws.close()
        await super().stop()

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_until(self, condition: Callable[[], Any], timeout: float = STEP_S) -> None:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: bool(condition())), timeout)

    # -- scripting ---------------------------------------------------------------------
    def fail(
        self,
        method: str,
        status: int = 429,
        error: str = "ratelimited",
        *,
        retry_after: float | None = None,
        times: int = 1,
        skip: int = 0,
        match: Callable[[dict[str, Any]], bool] | None = None,
    ) -> None:
        """The next ``times`` calls of ``method`` (after ``skip`` good ones; only calls
        ``match`` accepts) fail so."""
        queue = self._failures.setdefault(method, deque())
        failure = Failure(status, error, retry_after, skip=skip, match=match)
        queue.extend(failure for _ in range(times))

    def reset_after_accept(
        self, method: str = "chat.postMessage", times: int = 1, *, accept: bool = True
    ) -> None:
        """The next calls are carried out (unless not ``accept``), then the connection
        is reset unanswered."""
        queue = self._failures.setdefault(method, deque())
        queue.extend(Failure(0, "", reset=True, accept=accept) for _ in range(times))

    def next_ts(self) -> str:
        now = max(time.time(), self._last_ts + 0.000_01)
        self._last_ts = now
        return f"{now:.6f}"

    def add_message(
        self,
        text: str,
        *,
        channel: str = "D0DM",
        user: str = USER,
        thread_ts: str | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """Store a message as if someone wrote it; returns it (with its ``ts``)."""
        msg: dict[str, Any] = {"type": "message", "ts": self.next_ts(), "text": text}
        if user:
            msg["user"] = user
        if thread_ts:
            msg["thread_ts"] = thread_ts
        msg.update(fields)
        self.messages.setdefault(channel, []).append(msg)
        return msg

    def message(
        self,
        text: str,
        *,
        channel: str = "D0DM",
        channel_type: str | None = None,
        event_type: str = "message",
        **fields: Any,
    ) -> dict[str, Any]:
        """A new message stored in history, and its event (``message`` or ``app_mention``)."""
        stored = self.add_message(text, channel=channel, **fields)
        return self.event_for(stored, channel=channel, channel_type=channel_type,
                              event_type=event_type)  # fmt: skip

    def event_for(
        self,
        stored: dict[str, Any],
        *,
        channel: str,
        channel_type: str | None = None,
        event_type: str = "message",
    ) -> dict[str, Any]:
        """The event Slack sends for a stored message (the twin of another event too)."""
        event = {**stored, "type": event_type, "channel": channel, "event_ts": stored["ts"]}
        event.setdefault("team", TEAM)
        if event_type == "message":
            event["channel_type"] = channel_type or ("im" if channel.startswith("D") else "channel")
        return event

    def mention(self, text: str, *, channel: str = "C0GENERAL", **fields: Any) -> dict[str, Any]:
        """The ``app_mention`` event of a channel message that mentions the bot."""
        return self.message(f"<@{BOT_USER}> {text}", channel=channel, event_type="app_mention",
                            **fields)  # fmt: skip

    def body(self, event: dict[str, Any], event_id: str | None = None) -> dict[str, Any]:
        """The ``event_callback`` envelope Slack posts (same ``event_id`` = redelivery)."""
        return {
            "token": "verification-token",
            "team_id": TEAM,
            "api_app_id": "A0APP",
            "event": event,
            "type": "event_callback",
            "event_id": event_id or f"Ev{next(self._event_ids):08d}",
            "event_time": int(time.time()),
            "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
        }

    def add_file(
        self, name: str, data: bytes, mimetype: str, *, size: int | None = None, host: str = ""
    ) -> dict[str, Any]:
        """A shared file (as it appears in a message event's ``files``); ``size`` may
        declare another size than the bytes, ``host`` another file host."""
        file_id = f"F{next(self._file_ids):04d}"
        url = f"{host or self.root}/files-pri/{file_id}/{name}"
        obj = {"id": file_id, "name": name, "title": name, "mimetype": mimetype,
               "size": len(data) if size is None else size,
               "url_private": url, "url_private_download": url + "?download=1"}  # fmt: skip
        self.files[file_id] = (obj, data)
        return obj

    # -- inspection --------------------------------------------------------------------
    def calls_to(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def count(self, *methods: str) -> int:
        """Calls made to any of ``methods`` (refused ones included: each cost a request)."""
        return sum(1 for c in self.calls if c.method in methods)

    def find(self, channel: str, ts: str) -> dict[str, Any] | None:
        """The stored message ``ts`` of ``channel`` (None once deleted)."""
        return self._find(channel, ts)

    def posts(self, channel: str | None = None) -> list[dict[str, Any]]:
        """Messages the bot posted (stored, so a post whose answer was lost counts)."""
        return [
            m
            for ch, msgs in self.messages.items()
            for m in msgs
            if m.get("bot_id") == BOT_ID and (channel is None or ch == channel)
        ]

    async def wait_posts(self, n: int, timeout: float = STEP_S, **kw: Any) -> list[dict[str, Any]]:
        await self.wait_until(lambda: len(self.posts(**kw)) >= n, timeout)
        return self.posts(**kw)

    async def wait_calls(self, method: str, n: int = 1, timeout: float = STEP_S) -> list[Call]:
        await self.wait_until(lambda: len(self.calls_to(method)) >= n, timeout)
        return self.calls_to(method)

    # -- Web API -----------------------------------------------------------------------
    async def _params(self, request: web.Request) -> dict[str, Any]:
        params: dict[str, Any] = dict(request.query)
        if request.method == "POST" and request.can_read_body:
            if request.content_type == "application/json":
                params.update(await request.json())
            else:
                form = await request.post()
                params.update({k: str(v) for k, v in form.items()})
        for key in _JSON_FIELDS & params.keys():
            if isinstance(params[key], str) and params[key].startswith(("{", "[")):
                params[key] = json.loads(params[key])
        return params

    async def _api(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        self.connections.add(request.transport and request.transport.get_extra_info("peername"))
        params = await self._params(request)
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        token = token or str(params.pop("token", ""))
        failure = self._next_failure(method, params)
        async with self._changed:
            self.calls.append(Call(method, params, token, ok=failure is None or failure.reset))
            self._changed.notify_all()
        wanted = self.app_token if method == "apps.connections.open" else self.bot_token
        if token != wanted:
            return web.json_response({"ok": False, "error": "invalid_auth"})
        if failure is not None and not failure.reset:
            headers = {"Retry-After": f"{failure.retry_after:g}"} if failure.retry_after else {}
            return web.json_response(
                {"ok": False, "error": failure.error}, status=failure.status, headers=headers
            )
        if failure is not None and not failure.accept:
            assert request.transport is not None
            request.transport.abort()
            return web.Response()
        handler = getattr(self, "_m_" + method.replace(".", "_"), None)
        if handler is None:
            return web.json_response({"ok": False, "error": "unknown_method"}, status=404)
        response: web.Response = await handler(params)
        await self._notify()
        if failure is not None:  # the call took effect; its answer never arrives
            assert request.transport is not None
            request.transport.abort()
        return response

    def _next_failure(self, method: str, params: dict[str, Any]) -> Failure | None:
        failures = self._failures.get(method)
        if not failures or (failures[0].match is not None and not failures[0].match(params)):
            return None
        if failures[0].skip:
            failures[0] = replace(failures[0], skip=failures[0].skip - 1)
            return None
        return failures.popleft()

    def _ok(self, **fields: Any) -> web.Response:
        return web.json_response({"ok": True, **fields})

    def _error(self, error: str) -> web.Response:
        return web.json_response({"ok": False, "error": error})

    async def _m_auth_test(self, params: dict[str, Any]) -> web.Response:
        return self._ok(url="https://fake.slack.com/", team="Fake Team", user="fakebot",
                        team_id=TEAM, user_id=BOT_USER, bot_id=BOT_ID)  # fmt: skip

    async def _m_apps_connections_open(self, params: dict[str, Any]) -> web.Response:
        ticket = uuid.uuid4().hex[:8]
        return self._ok(url=f"ws://127.0.0.1:{self.port}/socket?ticket={ticket}")

    async def _m_chat_postMessage(self, params: dict[str, Any]) -> web.Response:
        channel = str(params.get("channel", ""))
        if not channel or channel.startswith("X"):
            return self._error("channel_not_found")
        msg: dict[str, Any] = {
            "type": "message",
            "ts": self.next_ts(),
            "text": params.get("text", ""),
            "user": BOT_USER,
            "bot_id": BOT_ID,
        }
        if params.get("thread_ts"):
            msg["thread_ts"] = str(params["thread_ts"])
        if isinstance(params.get("metadata"), dict):
            msg["metadata"] = params["metadata"]
        self.messages.setdefault(channel, []).append(msg)
        if self.after_post is not None:
            self.after_post(msg)
        return self._ok(channel=channel, ts=msg["ts"], message=msg)

    async def _m_files_info(self, params: dict[str, Any]) -> web.Response:
        found = self.files.get(str(params.get("file", "")))
        return self._ok(file=found[0]) if found else self._error("file_not_found")

    async def _file(self, request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization", "")
        self.file_fetches.append((request.match_info["id"], auth))
        found = self.files.get(request.match_info["id"])
        if auth != f"Bearer {self.bot_token}":  # Slack serves its sign-in page
            return web.Response(text="<html>sign in</html>", content_type="text/html")
        if found is None:
            return web.Response(status=404)
        return web.Response(body=found[1], content_type=found[0]["mimetype"])

    async def _m_files_getUploadURLExternal(self, params: dict[str, Any]) -> web.Response:
        file_id = f"F{next(self._file_ids):04d}"
        return self._ok(upload_url=f"{self.root}/upload/v1/{file_id}", file_id=file_id)

    async def _upload(self, request: web.Request) -> web.Response:
        self.uploaded[request.match_info["id"]] = await request.read()
        return web.Response(text=f"OK - {len(self.uploaded[request.match_info['id']])}")

    async def _m_files_completeUploadExternal(self, params: dict[str, Any]) -> web.Response:
        files = params.get("files") or []
        if any(f.get("id") not in self.uploaded for f in files):
            return self._error("file_not_found")
        self.shared.append(params)
        channel = str(params.get("channel_id", ""))
        msg = {"type": "message", "ts": self.next_ts(), "user": BOT_USER, "bot_id": BOT_ID,
               "text": params.get("initial_comment", ""), "files": files}  # fmt: skip
        if params.get("thread_ts"):
            msg["thread_ts"] = str(params["thread_ts"])
        self.messages.setdefault(channel, []).append(msg)
        return self._ok(files=[{"id": f["id"], "title": f.get("title")} for f in files])

    def _find(self, channel: str, ts: str) -> dict[str, Any] | None:
        return next((m for m in self.messages.get(channel, []) if m["ts"] == ts), None)

    async def _m_chat_update(self, params: dict[str, Any]) -> web.Response:
        channel, ts = str(params.get("channel")), str(params.get("ts"))
        msg = self._find(channel, ts)
        if msg is None:
            return self._error("message_not_found")
        if msg.get("bot_id") != BOT_ID:
            return self._error("cant_update_message")
        if params.get("markdown_text"):
            msg["text"] = params["markdown_text"]
        elif "text" in params:
            msg["text"] = params.get("text", "")
        if isinstance(params.get("metadata"), dict):
            msg["metadata"] = params["metadata"]
        if params.get("blocks") is not None:  # absent: the previous blocks stay
            msg["blocks"] = params["blocks"]
        msg["edited"] = {"user": BOT_USER, "ts": self.next_ts()}
        return self._ok(channel=channel, ts=ts, text=msg["text"])

    async def _m_chat_delete(self, params: dict[str, Any]) -> web.Response:
        channel, ts = str(params.get("channel")), str(params.get("ts"))
        msg = self._find(channel, ts)
        if msg is None:
            return self._error("message_not_found")
        if msg.get("bot_id") != BOT_ID:
            return self._error("cant_delete_message")
        self.messages[channel].remove(msg)
        self.streams.discard((channel, ts))
        return self._ok(channel=channel, ts=ts)

    # -- streaming (chat.startStream / appendStream / stopStream) ----------------------
    @staticmethod
    def _streamed(params: dict[str, Any]) -> str:
        """The text one streaming call adds: ``markdown_text`` and markdown chunks."""
        text = str(params.get("markdown_text") or "")
        chunks = params.get("chunks")
        if isinstance(chunks, str):
            chunks = json.loads(chunks)
        for chunk in chunks or ():
            if isinstance(chunk, dict) and chunk.get("type") == "markdown_text":
                text += str(chunk.get("text") or "")
        return text

    async def _m_chat_startStream(self, params: dict[str, Any]) -> web.Response:
        if not self.streaming:
            return self._error(self.streaming_error)
        channel, thread = str(params.get("channel", "")), params.get("thread_ts")
        if not channel or channel.startswith("X"):
            return self._error("channel_not_found")
        if not thread:
            return self._error("invalid_arguments")
        if not channel.startswith("D") and not (
            params.get("recipient_team_id") and params.get("recipient_user_id")
        ):
            return self._error("invalid_arguments")
        msg: dict[str, Any] = {
            "type": "message", "ts": self.next_ts(), "text": self._streamed(params),
            "user": BOT_USER, "bot_id": BOT_ID, "thread_ts": str(thread),
        }  # fmt: skip
        self.messages.setdefault(channel, []).append(msg)
        self.streams.add((channel, msg["ts"]))
        return self._ok(channel=channel, ts=msg["ts"])

    async def _m_chat_appendStream(self, params: dict[str, Any]) -> web.Response:
        channel, ts = str(params.get("channel")), str(params.get("ts"))
        msg = self._find(channel, ts)
        if msg is None:
            return self._error("message_not_found")
        if (channel, ts) not in self.streams:
            return self._error("message_not_in_streaming_state")
        msg["text"] += self._streamed(params)
        return self._ok(channel=channel, ts=ts)

    async def _m_chat_stopStream(self, params: dict[str, Any]) -> web.Response:
        channel, ts = str(params.get("channel")), str(params.get("ts"))
        msg = self._find(channel, ts)
        if msg is None:
            return self._error("message_not_found")
        if (channel, ts) not in self.streams:
            return self._error("message_not_in_streaming_state")
        msg["text"] += self._streamed(params)
        if isinstance(params.get("metadata"), dict):
            msg["metadata"] = params["metadata"]
        self.streams.discard((channel, ts))
        return self._ok(channel=channel, ts=ts, message=msg)

    def _window(self, msgs: list[dict[str, Any]], params: dict[str, Any]) -> list[dict[str, Any]]:
        oldest = float(params.get("oldest") or 0)
        latest = float(params.get("latest") or 0) or float("inf")
        inclusive = _truthy(params.get("inclusive"))
        found = [
            m
            for m in msgs
            if (oldest <= float(m["ts"]) if inclusive else oldest < float(m["ts"]))
            and (float(m["ts"]) <= latest if inclusive else float(m["ts"]) < latest)
        ]
        keep_metadata = _truthy(params.get("include_all_metadata"))
        return [m if keep_metadata else {k: v for k, v in m.items() if k != "metadata"}
                for m in found]  # fmt: skip

    async def _m_conversations_replies(self, params: dict[str, Any]) -> web.Response:
        channel, root = str(params.get("channel")), str(params.get("ts"))
        msgs = [
            m
            for m in self.messages.get(channel, [])
            if m["ts"] == root or m.get("thread_ts") == root
        ]
        if not msgs:
            return self._error("thread_not_found")
        limit = int(params.get("limit") or 1000)
        return self._ok(messages=self._window(msgs, params)[:limit], has_more=False)

    async def _m_conversations_history(self, params: dict[str, Any]) -> web.Response:
        channel = str(params.get("channel"))
        top = [m for m in self.messages.get(channel, []) if m.get("thread_ts") in (None, m["ts"])]
        limit = int(params.get("limit") or 100)
        newest_first = list(reversed(self._window(top, params)))
        return self._ok(messages=newest_first[:limit], has_more=False)

    async def _m_reactions_add(self, params: dict[str, Any]) -> web.Response:
        key = (str(params.get("channel")), str(params.get("timestamp")), str(params.get("name")))
        if self._find(key[0], key[1]) is None:
            return self._error("message_not_found")
        if key in self.reactions:
            return self._error("already_reacted")
        self.reactions.add(key)
        return self._ok()

    async def _m_reactions_remove(self, params: dict[str, Any]) -> web.Response:
        key = (str(params.get("channel")), str(params.get("timestamp")), str(params.get("name")))
        if key not in self.reactions:
            return self._error("no_reaction")
        self.reactions.discard(key)
        return self._ok()

    # -- Socket Mode -------------------------------------------------------------------
    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        async with self._changed:
            self.socket_attempts += 1
            self._changed.notify_all()
        if self.socket_gate is not None:  # a slow Socket Mode endpoint
            await self.socket_gate.wait()
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        if request.transport is not None:
            self._transports[ws] = request.transport
        async with self._changed:
            self.sockets.append(ws)
            self.sockets_opened += 1
            self.max_open_sockets = max(self.max_open_sockets, len(self.sockets))
            self._changed.notify_all()
        try:
            await ws.send_json({"type": "hello", "num_connections": len(self.sockets),
                                "connection_info": {"app_id": "A0APP"}})  # fmt: skip
            while self._undelivered:
                await ws.send_str(self._undelivered.popleft())
            async for frame in ws:
                if frame.type == aiohttp.WSMsgType.TEXT:
                    async with self._changed:
                        self.acks.append(json.loads(frame.data))
                        self._changed.notify_all()
        finally:
            async with self._changed:
                if ws in self.sockets:
                    self.sockets.remove(ws)
                self._transports.pop(ws, None)
                self._changed.notify_all()
        return ws

    async def push(self, event: dict[str, Any], *, event_id: str | None = None,
                   retry_attempt: int = 0) -> str:  # fmt: skip
        """Send an ``events_api`` envelope on the open socket (queued until one opens);
        returns its envelope id. The same ``event_id`` again is Slack's redelivery."""
        envelope_id = uuid.uuid4().hex
        envelope = {
            "envelope_id": envelope_id,
            "type": "events_api",
            "accepts_response_payload": False,
            "retry_attempt": retry_attempt,
            "retry_reason": "timeout" if retry_attempt else "",
            "payload": self.body(event, event_id),
        }
        raw = json.dumps(envelope)
        if self.sockets:
            await self.sockets[-1].send_str(raw)
        else:
            self._undelivered.append(raw)
        return envelope_id

    async def deliver(self, event: dict[str, Any], *, redeliver_s: float = 1.5,
                      attempts: int = 20) -> None:  # fmt: skip
        """Slack with several Socket Mode connections open (replicas): the event goes to
        one of them, in turn; one not acknowledged within ``redeliver_s`` (a frozen
        process, a socket that just died) goes again, ``retry_attempt`` + 1, to the next.
        Returns once a connection acknowledged it."""
        event_id = f"Ev{next(self._event_ids):08d}"
        for attempt in range(attempts):
            await self.wait_until(lambda: bool(self.sockets), redeliver_s * attempts)
            self._turn += 1
            ws = self.sockets[self._turn % len(self.sockets)]
            envelope_id = uuid.uuid4().hex
            envelope = {"envelope_id": envelope_id, "type": "events_api",
                        "accepts_response_payload": False, "retry_attempt": attempt,
                        "retry_reason": "timeout" if attempt else "",
                        "payload": self.body(event, event_id)}  # fmt: skip
            with contextlib.suppress(ConnectionError, RuntimeError):  # a socket going away
                await ws.send_str(json.dumps(envelope))
            with contextlib.suppress(TimeoutError):
                await self.wait_acked(envelope_id, redeliver_s)
                return
        raise TimeoutError(f"event {event_id} never acknowledged")

    def acked(self, envelope_id: str) -> bool:
        return any(a.get("envelope_id") == envelope_id for a in self.acks)

    async def wait_acked(self, envelope_id: str, timeout: float = STEP_S) -> None:
        await self.wait_until(lambda: self.acked(envelope_id), timeout)

    async def wait_socket(self, opened: int = 1, timeout: float = STEP_S) -> None:
        """Until ``opened`` connections were made in all and one is open now."""
        await self.wait_until(lambda: self.sockets_opened >= opened and self.sockets, timeout)

    async def drop_sockets(self, *, abrupt: bool = False) -> None:
        """The server closes every socket: with a close frame (as on Slack's restarts)
        or, ``abrupt``, by cutting the TCP connection (a network failure)."""
        for ws in list(self.sockets):
            transport = self._transports.get(ws)
            if abrupt and transport is not None:
                transport.abort()
            else:
                await ws.close()
        await self.wait_until(lambda: not self.sockets)

    async def ask_to_reconnect(self) -> None:
        """Slack's ``disconnect`` message (refresh_requested): the client must move."""
        for ws in list(self.sockets):
            await ws.send_json({"type": "disconnect", "reason": "refresh_requested"})


def sign(secret: str, timestamp: str, body: bytes) -> str:
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


async def post_signed(
    url: str,
    body: dict[str, Any] | bytes,
    secret: str,
    *,
    timestamp: int | None = None,
    retry_num: int | None = None,
    signature: str | None = None,
) -> tuple[int, str]:
    """POST an event as Slack does (``X-Slack-Signature`` over ``v0:<ts>:<body>``)."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    headers = {
        "Content-Type": "application/json",
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": signature or sign(secret, stamp, raw),
    }
    if retry_num is not None:
        headers["X-Slack-Retry-Num"] = str(retry_num)
        headers["X-Slack-Retry-Reason"] = "http_timeout"
    async with aiohttp.ClientSession() as http, http.post(url, data=raw, headers=headers) as r:
        return r.status, await r.text()


@pytest_asyncio.fixture
async def fake_slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        yield fake


class Inbox:
    """A ``put_inbound`` that keeps equal message ids once, as the daemon's inbox does.

    ``gate`` (when set) holds every call until opened, to observe the ack ordering;
    ``fail_next`` makes that many calls raise (the journal is down).
    """

    def __init__(self) -> None:
        self.accepted: list[InboundMessage] = []
        self.offered: list[InboundMessage] = []
        self.gate: asyncio.Event | None = None
        self.fail_next = 0
        self._changed = asyncio.Condition()

    async def __call__(self, msg: InboundMessage) -> None:
        async with self._changed:
            self.offered.append(msg)
            self._changed.notify_all()
        if self.gate is not None:
            await self.gate.wait()
        if self.fail_next:
            self.fail_next -= 1
            raise RuntimeError("journal unavailable")
        async with self._changed:
            if all(m.message_id != msg.message_id for m in self.accepted):
                self.accepted.append(msg)
            self._changed.notify_all()

    async def wait(self, n: int = 1, timeout: float = STEP_S) -> list[InboundMessage]:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: len(self.accepted) >= n), timeout)
        return self.accepted

    async def wait_offered(self, n: int = 1, timeout: float = STEP_S) -> list[InboundMessage]:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: len(self.offered) >= n), timeout)
        return self.offered


class MemoryState:
    """The channel's StateStore, in memory (survives a channel restart within a test)."""

    def __init__(self) -> None:
        self.data: dict[str, str] = {}

    async def get(self, key: str, default: str | None = None) -> str | None:
        return self.data.get(key, default)

    async def set(self, key: str, value: str, *, keep_for: timedelta | None = None) -> None:
        self.data[key] = value

    async def delete(self, key: str) -> None:
        self.data.pop(key, None)


class RoutesServer(LoopbackServer):
    """A small aiohttp app on 127.0.0.1:0 mounting a channel's routes, as the daemon's
    shared web app does."""

    def __init__(self, routes: Sequence[Route]) -> None:
        self.routes = list(routes)

    def add_routes(self, app: web.Application) -> None:
        for route in self.routes:
            app.router.add_route(route.method, route.path, route.handler)

    def url(self, path: str = "/slack/events") -> str:
        return self.root + path


async def wait_for(condition: Callable[[], Any], timeout: float = STEP_S) -> None:
    """Poll a condition the fakes cannot signal (e.g. the client's socket state)."""
    async with asyncio.timeout(timeout):
        while not condition():  # noqa: ASYNC110 (client state: no event to await)
            await asyncio.sleep(0.02)


ChannelFactory = Callable[..., Awaitable[tuple[Any, Inbox]]]


@pytest_asyncio.fixture
async def slack_channel(fake_slack: FakeSlack) -> AsyncIterator[ChannelFactory]:
    """Start real SlackChannels against the fake (Socket Mode unless ``app_token=""``)."""
    from channels.slack.adapter import SlackChannel
    from channels.slack.settings import SlackSettings

    started: list[SlackChannel] = []

    async def make(
        *,
        inbox: Inbox | None = None,
        state: MemoryState | None = None,
        window: CatchUpWindow | None = None,
        **settings: Any,
    ) -> tuple[SlackChannel, Inbox]:
        values = {
            "bot_token": fake_slack.bot_token,
            "app_token": fake_slack.app_token,
            "api_url": fake_slack.api_url,
            **settings,
        }
        channel = SlackChannel(
            SlackSettings(**values), state=state or MemoryState(), ping_interval=PING_INTERVAL_S,
            max_wait_s=2.0,
        )  # fmt: skip
        if window is not None:
            channel.catch_up_within(window)
        inbox = inbox or Inbox()
        started.append(channel)
        await channel.start(inbox)
        return channel, inbox

    yield make
    for channel in started:
        await channel.stop()
