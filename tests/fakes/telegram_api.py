"""A scriptable fake Telegram Bot API on loopback, for the REAL python-telegram-bot.

PTB talks to it over real HTTP (``base_url=fake.base_url``), so request encoding,
response parsing and PTB's error mapping are all exercised::

    async with FakeTelegram() as tg:
        tg.message("hi", chat_id=42)                  # queue an update (long-poll wakes)
        tg.fail("sendMessage", 429, retry_after=0.1, times=3)
        tg.fail("getUpdates", 502)
        tg.fail("sendMessage", 400, "Bad Request: can't parse entities: ...")
        await tg.wait_for("sendMessage", 1)
        tg.sent(chat_id=42)[0].params["text"]

getUpdates honours offset semantics (updates below the offset are confirmed and
dropped) and holds the request until an update arrives or its ``timeout`` elapses.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest_asyncio
from aiohttp import web

from tests.fakes.loopback import LoopbackServer
from tests.fakes.waiting import STEP_S

DRAFT_LAPSE_S = 30.0  # a draft not updated for this long is no longer shown
MAX_CAPTION_UNITS = 1024  # a file's caption, in UTF-16 units, as Telegram counts it

# Form fields PTB JSON-encodes (every non-string value); the rest stay strings.
_INT_FIELDS = {"chat_id", "message_id", "message_thread_id", "draft_id", "offset", "limit",
               "timeout"}  # fmt: skip
_JSON_FIELDS = {
    "reply_parameters",
    "entities",
    "caption_entities",
    "allowed_updates",
    "reply_markup",
}


@dataclass(frozen=True, slots=True)
class Call:
    method: str
    params: dict[str, Any]
    headers: dict[str, str]
    ok: bool = True  # False when a scripted failure answered it
    at: float = field(default_factory=time.monotonic)


@dataclass(frozen=True, slots=True)
class Failure:
    status: int
    description: str
    retry_after: float | None = None
    match: Callable[[dict[str, Any]], bool] | None = None  # only calls it accepts
    migrate_to_chat_id: int | None = None  # a group upgraded: its supergroup's id


def _decode(form: dict[str, str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for key, value in form.items():
        if key in _INT_FIELDS and value.lstrip("-").isdigit():
            params[key] = int(value)
        elif key in _JSON_FIELDS:
            params[key] = json.loads(value)
        else:
            params[key] = value
    return params


async def _params(request: web.Request) -> dict[str, Any] | None:
    """A call's parameters as the Bot API reads them: a JSON object body (values as
    they are), or a form (urlencoded or multipart; JSON-serialized fields decoded). None
    for a JSON body that is not an object."""
    if request.content_type == "application/json":
        try:
            body = json.loads(await request.read() or b"{}")
        except ValueError:
            return None
        return body if isinstance(body, dict) else None
    form = await request.post()
    params = _decode({k: str(v) for k, v in form.items() if not isinstance(v, web.FileField)})
    for k, v in form.items():  # an uploaded file: its name and bytes
        if isinstance(v, web.FileField):
            params[k] = {"filename": v.filename, "data": v.file.read()}
    return params


class FakeTelegram(LoopbackServer):
    def __init__(self, token: str = "123456:TEST-token", username: str = "test_bot") -> None:
        self.token = token
        self.bot_id = int(token.split(":", 1)[0])
        self.username = username
        self.calls: list[Call] = []
        self.updates: list[dict[str, Any]] = []  # queued, not yet confirmed
        self.files: dict[str, tuple[str, bytes]] = {}
        # What a user sees: the bot's messages by (chat id, message id), as edited.
        self.texts: dict[tuple[int, int], str] = {}
        self.formats: dict[tuple[int, int], list[dict[str, Any]]] = {}  # entities, as edited
        # Drafts being shown (sendMessageDraft, private chats): chat id -> (draft id, text,
        # when last updated). A message the bot sends there replaces its draft; a draft
        # not updated for DRAFT_LAPSE_S is gone.
        self.drafts: dict[int, tuple[int, str, float]] = {}
        self.webhook: dict[str, Any] = {}
        # getWebhookInfo's last delivery error: (unix time, message), as Telegram keeps it.
        self.webhook_error: tuple[int, str] | None = None
        self.pending_updates = 0
        self._failures: dict[str, deque[Failure]] = {}
        self._update_ids = itertools.count(1000)
        self._message_ids = itertools.count(1)
        self._sent_ids = itertools.count(50_000)
        self._changed = asyncio.Condition()
        self._tasks: set[asyncio.Task[None]] = set()

    # -- lifecycle -------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/bot"

    def section(self, **extra: Any) -> dict[str, Any]:
        """A ``[channels.telegram]`` section against this fake, open to everyone."""
        return {"token": self.token, "base_url": self.base_url, "allow_from": ["*"], **extra}

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/bot{token}/{method}", self._api)
        app.router.add_get("/file/bot{token}/{path:.+}", self._file)

    # -- scripting -------------------------------------------------------------------
    def fail(
        self,
        method: str,
        status: int,
        description: str = "",
        *,
        retry_after: float | None = None,
        times: int = 1,
        match: Callable[[dict[str, Any]], bool] | None = None,
        migrate_to_chat_id: int | None = None,
    ) -> None:
        """The next ``times`` calls of ``method`` (that ``match`` accepts) fail so;
        ``migrate_to_chat_id``: as a group upgraded to a supergroup answers (a 400)."""
        text = description or {
            429: f"Too Many Requests: retry after {retry_after}",
            403: "Forbidden: bot was blocked by the user",
            502: "Bad Gateway",
        }.get(status, "Bad Request: error")
        queue = self._failures.setdefault(method, deque())
        failure = Failure(status, text, retry_after, match, migrate_to_chat_id)
        queue.extend(failure for _ in range(times))

    def clear_failures(self, method: str) -> None:
        """The scripted failures of ``method`` not yet used are dropped: it works again."""
        self._failures.pop(method, None)

    def add_update(self, update: dict[str, Any]) -> dict[str, Any]:
        update.setdefault("update_id", next(self._update_ids))
        self.updates.append(update)
        task = asyncio.get_running_loop().create_task(self._notify())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return update

    def make_message(
        self,
        text: str | None = None,
        *,
        chat_id: int = 42,
        user_id: int = 7,
        username: str | None = "alice",
        chat_type: str | None = None,
        thread_id: int | None = None,
        reply_to: dict[str, Any] | None = None,
        message_id: int | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """A Message dict; "@mentions" and a leading "/command" get their entities."""
        chat_type = chat_type or ("private" if chat_id > 0 else "supergroup")
        user: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": f"User{user_id}"}
        if username:
            user["username"] = username
        chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
        if chat_type != "private":
            chat["title"] = "Test group"
        msg: dict[str, Any] = {
            "message_id": message_id if message_id is not None else next(self._message_ids),
            "date": int(time.time()),
            "chat": chat,
            "from": user,
        }
        if text is not None:
            msg["text"] = text
            entities = _entities(text)
            if entities:
                msg["entities"] = entities
        if thread_id is not None:
            msg["message_thread_id"] = thread_id
            msg["is_topic_message"] = True
        if reply_to is not None:
            msg["reply_to_message"] = reply_to
        msg.update(fields)
        return msg

    def message(self, text: str | None = None, **kw: Any) -> dict[str, Any]:
        """Queue an update carrying a new message; returns the update."""
        return self.add_update({"message": self.make_message(text, **kw)})

    def bot_message(self, text: str, chat_id: int = 42) -> dict[str, Any]:
        """A message the bot itself sent (to reply to)."""
        return {
            "message_id": next(self._sent_ids),
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "private" if chat_id > 0 else "supergroup"},
            "from": {
                "id": self.bot_id,
                "is_bot": True,
                "first_name": "Bot",
                "username": self.username,
            },
            "text": text,
        }

    def add_file(self, file_id: str, data: bytes, path: str = "documents/file_0.bin") -> None:
        self.files[file_id] = (path, data)

    # -- inspection ------------------------------------------------------------------
    def visible(self, chat_id: int) -> list[str]:
        """The texts of the bot's messages in a chat, oldest first, as edited now."""
        return [text for (chat, _), text in sorted(self.texts.items()) if chat == chat_id]

    def shown(self, chat_id: int) -> list[tuple[str, list[dict[str, Any]]]]:
        """Like :meth:`visible`, each text with its entities: the answers as they read
        now (a streamed preview ends as its answer's message; a test meaning the answer
        waits for it here rather than taking the first sendMessage, maybe the preview)."""
        return [
            (text, self.formats.get(where, []))
            for where, text in sorted(self.texts.items())
            if where[0] == chat_id
        ]

    async def wait_until(self, condition: Callable[[], Any], timeout: float = STEP_S) -> None:
        """Until ``condition()`` holds; it is looked at after each call was handled."""
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: bool(condition())), timeout)

    def draft(self, chat_id: int) -> str | None:
        """The draft shown in a private chat now, if any."""
        shown = self.drafts.get(chat_id)
        if shown is None or time.monotonic() - shown[2] > DRAFT_LAPSE_S:
            return None
        return shown[1]

    def counted(self, chat_id: int) -> int:
        """sendMessage and editMessageText calls in a chat (the streaming budget)."""
        return sum(
            1
            for c in self.calls
            if c.method in ("sendMessage", "editMessageText") and c.params.get("chat_id") == chat_id
        )

    def counted_calls(self, chat_id: int) -> list[Call]:
        """The calls :meth:`counted` counts, in order: what the chat was shown."""
        return [
            c
            for c in self.calls
            if c.method in ("sendMessage", "editMessageText") and c.params.get("chat_id") == chat_id
        ]

    def calls_to(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def sent(self, chat_id: int | None = None) -> list[Call]:
        """Successful sendMessage calls (failures answered by a script are not counted)."""
        return [
            c
            for c in self.calls_to("sendMessage")
            if c.ok and (chat_id is None or c.params["chat_id"] == chat_id)
        ]

    async def wait_for(
        self,
        method: str,
        n: int = 1,
        timeout: float = STEP_S,
        predicate: Callable[[Call], bool] = lambda c: True,
    ) -> list[Call]:
        """Wait for ``n`` calls of ``method`` matching ``predicate`` (failed ones too)."""

        def matching() -> list[Call]:
            return [c for c in self.calls_to(method) if predicate(c)]

        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: len(matching()) >= n), timeout)
        return matching()

    async def wait_sent(self, n: int = 1, timeout: float = STEP_S, **kw: Any) -> list[Call]:
        async with self._changed:
            await asyncio.wait_for(
                self._changed.wait_for(lambda: len(self.sent(**kw)) >= n), timeout
            )
        return self.sent(**kw)

    async def wait_confirmed(self, update_id: int, timeout: float = STEP_S) -> None:
        """Until the client confirmed ``update_id`` (asked for a higher offset)."""
        async with self._changed:
            await asyncio.wait_for(
                self._changed.wait_for(
                    lambda: all(u["update_id"] != update_id for u in self.updates)
                ),
                timeout,
            )

    # -- server ----------------------------------------------------------------------
    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    def _ok(self, result: Any) -> web.Response:
        return web.json_response({"ok": True, "result": result})

    async def _api(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return web.json_response(
                {"ok": False, "error_code": 401, "description": "Unauthorized"}, status=401
            )
        method = request.match_info["method"]
        params = await _params(request)
        if params is None:
            return web.json_response(
                {"ok": False, "error_code": 400, "description": "Bad Request: can't parse JSON"},
                status=400,
            )
        headers = {k.lower(): v for k, v in request.headers.items()}
        failures = self._failures.get(method, deque())
        failure = next((f for f in failures if f.match is None or f.match(params)), None)
        if failure is not None:
            failures.remove(failure)
        async with self._changed:
            self.calls.append(Call(method, params, headers, ok=failure is None))
            self._changed.notify_all()
        if failure is not None:
            body: dict[str, Any] = {
                "ok": False,
                "error_code": failure.status,
                "description": failure.description,
            }
            if failure.retry_after is not None:
                body["parameters"] = {"retry_after": failure.retry_after}
            if failure.migrate_to_chat_id is not None:
                body["parameters"] = {"migrate_to_chat_id": failure.migrate_to_chat_id}
            return web.json_response(body, status=failure.status)
        handler = getattr(self, f"_m_{method}", None)
        if handler is None:
            return web.json_response(
                {"ok": False, "error_code": 404, "description": "Not Found"}, status=404
            )
        response: web.Response = await handler(params)
        await self._notify()  # what the call changed (the texts shown), for wait_until
        return response

    async def _m_getMe(self, params: dict[str, Any]) -> web.Response:
        return self._ok(
            {
                "id": self.bot_id,
                "is_bot": True,
                "first_name": "Test Bot",
                "username": self.username,
                "can_join_groups": True,
                "can_read_all_group_messages": False,
                "supports_inline_queries": False,
            }
        )

    async def _m_deleteWebhook(self, params: dict[str, Any]) -> web.Response:
        self.webhook = {}
        return self._ok(True)

    async def _m_setWebhook(self, params: dict[str, Any]) -> web.Response:
        self.webhook = params
        return self._ok(True)

    async def _m_getWebhookInfo(self, params: dict[str, Any]) -> web.Response:
        info: dict[str, Any] = {
            "url": self.webhook.get("url", ""),
            "has_custom_certificate": False,
            "pending_update_count": self.pending_updates,
        }
        if self.webhook_error is not None:
            info["last_error_date"], info["last_error_message"] = self.webhook_error
        return self._ok(info)

    async def _m_getUpdates(self, params: dict[str, Any]) -> web.Response:
        offset = params.get("offset")
        limit = int(params.get("limit", 100))
        timeout = float(params.get("timeout", 0))
        async with self._changed:
            if isinstance(offset, int) and offset > 0:
                self.updates = [u for u in self.updates if u["update_id"] >= offset]
                self._changed.notify_all()
            if not self.updates and timeout > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(
                        self._changed.wait_for(lambda: bool(self.updates)), timeout
                    )
            batch = self.updates[:limit]
        return self._ok(batch)

    async def _m_sendMessage(self, params: dict[str, Any]) -> web.Response:
        chat_id = params["chat_id"]
        result: dict[str, Any] = {
            "message_id": next(self._sent_ids),
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "private" if chat_id > 0 else "supergroup"},
            "from": {"id": self.bot_id, "is_bot": True, "first_name": "Test Bot"},
            "text": params.get("text", ""),
        }
        if "message_thread_id" in params:
            result["message_thread_id"] = params["message_thread_id"]
        self.texts[(chat_id, result["message_id"])] = result["text"]
        self.formats[(chat_id, result["message_id"])] = list(params.get("entities") or [])
        self.drafts.pop(chat_id, None)  # the message the draft was becoming
        return self._ok(result)

    async def _m_sendMessageDraft(self, params: dict[str, Any]) -> web.Response:
        chat_id, draft_id = params.get("chat_id", 0), params.get("draft_id", 0)
        if not isinstance(chat_id, int) or chat_id <= 0:
            return self._bad("TEXTDRAFT_PEER_INVALID")  # drafts: private chats only
        if not isinstance(draft_id, int) or draft_id == 0:
            return self._bad("draft_id must be non-zero")
        self.drafts[chat_id] = (draft_id, params.get("text", ""), time.monotonic())
        return self._ok(True)

    async def _m_sendPhoto(self, params: dict[str, Any]) -> web.Response:
        return self._sent_file(params, "photo")

    async def _m_sendDocument(self, params: dict[str, Any]) -> web.Response:
        return self._sent_file(params, "document")

    def _sent_file(self, params: dict[str, Any], field: str) -> web.Response:
        upload = params.get(field)
        if not isinstance(upload, dict):
            return web.json_response(
                {"ok": False, "error_code": 400, "description": "Bad Request: no file"},
                status=400,
            )
        caption = params.get("caption", "")
        if len(caption.encode("utf-16-le", "surrogatepass")) > 2 * MAX_CAPTION_UNITS:
            return self._bad("message caption is too long")  # counted in UTF-16 units
        chat_id = int(params["chat_id"])
        result: dict[str, Any] = {
            "message_id": next(self._sent_ids),
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "private" if chat_id > 0 else "supergroup"},
            "caption": caption,
        }
        if params.get("caption_entities"):
            result["caption_entities"] = params["caption_entities"]
        file = {"file_id": f"sent-{result['message_id']}", "file_unique_id": "u",
                "file_size": len(upload["data"])}  # fmt: skip
        result[field] = [{**file, "width": 1, "height": 1}] if field == "photo" else file
        return self._ok(result)

    def uploads(self) -> list[tuple[str, str, bytes, dict[str, Any]]]:
        """(method, file name, bytes, params) of each sendPhoto / sendDocument accepted."""
        out = []
        for c in self.calls:
            field = {"sendPhoto": "photo", "sendDocument": "document"}.get(c.method)
            if field and c.ok and isinstance(c.params.get(field), dict):
                upload = c.params[field]
                out.append((c.method, upload["filename"], upload["data"], c.params))
        return out

    async def _m_sendChatAction(self, params: dict[str, Any]) -> web.Response:
        return self._ok(True)

    def _bad(self, description: str) -> web.Response:
        body = {"ok": False, "error_code": 400, "description": f"Bad Request: {description}"}
        return web.json_response(body, status=400)

    async def _m_deleteMessage(self, params: dict[str, Any]) -> web.Response:
        if self.texts.pop((params.get("chat_id", 0), params.get("message_id", 0)), None) is None:
            return self._bad("message to delete not found")
        return self._ok(True)

    async def _m_editMessageText(self, params: dict[str, Any]) -> web.Response:
        where = (params.get("chat_id", 0), params.get("message_id", 0))
        if where in self.texts or where[1] >= 50_000:  # one of ours: kept as edited
            if self.texts.get(where) == params.get("text", ""):
                return self._bad(
                    "message is not modified: specified new message content and "
                    "reply markup are exactly the same"
                )
            if where not in self.texts:
                return self._bad("message to edit not found")
            self.texts[where] = params.get("text", "")
            self.formats[where] = list(params.get("entities") or [])
        return self._ok(
            {
                "message_id": params.get("message_id", 0),
                "date": int(time.time()),
                "chat": {"id": params.get("chat_id", 0), "type": "private"},
                "text": params.get("text", ""),
            }
        )

    async def _m_getFile(self, params: dict[str, Any]) -> web.Response:
        file_id = params.get("file_id", "")
        if file_id not in self.files:
            return web.json_response(
                {"ok": False, "error_code": 400, "description": "Bad Request: invalid file_id"},
                status=400,
            )
        path, data = self.files[file_id]
        return self._ok(
            {
                "file_id": file_id,
                "file_unique_id": f"u{file_id}",
                "file_size": len(data),
                "file_path": path,
            }
        )

    async def _file(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return web.Response(status=401)
        path = request.match_info["path"]
        for stored, data in self.files.values():
            if stored == path:
                return web.Response(body=data)
        return web.Response(status=404)


def _entities(text: str) -> list[dict[str, Any]]:
    """bot_command / mention entities as Telegram computes them (UTF-16 offsets)."""
    found = []
    for match in re.finditer(r"(?<!\w)(/[A-Za-z]\w*(?:@\w+)?|@\w{3,})", text):
        kind = "bot_command" if match.group().startswith("/") else "mention"
        if kind == "bot_command" and match.start() != 0:
            continue
        offset = len(text[: match.start()].encode("utf-16-le")) // 2
        length = len(match.group().encode("utf-16-le")) // 2
        found.append({"type": kind, "offset": offset, "length": length})
    return found


@pytest_asyncio.fixture
async def fake_telegram() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        yield fake


TelegramDaemonFactory = Callable[..., Awaitable[tuple[Any, Any]]]


@pytest_asyncio.fixture
async def telegram_daemon(
    tmp_path: Path, fake_llm: Any, fake_telegram: FakeTelegram
) -> AsyncIterator[TelegramDaemonFactory]:
    """Start a Daemon with a real TelegramChannel against the fake Bot API and fake LLM."""
    from bot.app import build_daemon
    from channels.telegram.adapter import Backoff, TelegramChannel
    from tests.conftest import make_settings

    started: list[Any] = []

    async def factory(
        *,
        data_dir: Path | None = None,
        poll_timeout: int = 1,
        webhook_check_s: float = 60.0,
        state: Any = None,
        admins: list[str] | None = None,
        agent: dict[str, Any] | None = None,
        media: dict[str, Any] | None = None,
        streaming: dict[str, Any] | None = None,
        streaming_off: bool = False,
        llm: dict[str, Any] | None = None,
        weather: Any = None,
        **telegram: Any,
    ) -> tuple[Any, TelegramChannel]:
        section = fake_telegram.section(
            **telegram, **({"streaming": False} if streaming_off else {})
        )
        settings = make_settings(
            data_dir or tmp_path / "data",
            fake_llm.url,
            channels={"telegram": section},
            admins=admins or [],
            agent=agent or {},
            media=media or {},
            streaming=streaming or {},
            llm=llm or {},
            **({"weather": weather} if weather is not None else {}),
        )
        made: list[TelegramChannel] = []

        def channels(ctx: Any) -> list[TelegramChannel]:
            made.append(
                TelegramChannel(
                    settings.channels.telegram,
                    state=state if state is not None else ctx.state,
                    poll_timeout=poll_timeout,
                    backoff=Backoff(base=0.05, cap=0.4),
                    webhook_check_s=webhook_check_s,
                )
            )
            return made

        daemon = build_daemon(settings, channels)
        (channel,) = made
        await daemon.start()
        started.append(daemon)
        return daemon, channel

    yield factory
    for daemon in started:
        if daemon.db._conn is not None:
            await daemon.stop(timeout=2)
