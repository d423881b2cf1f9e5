"""tests.fakes.FakeTelegram in its own process, driving closed-loop chats.

The daemon under test polls this fake through the real python-telegram-bot, as in
production; the fake's CPU (and the driver's) is billed to this process, not to the
daemon. Run as ``python -m bench.fake_telegram_server``: prints ``PORT <n>`` once it
listens and serves until stdin closes.

``POST /bench/run {"chats": n, "per_chat": m, "prefix": "p"}`` starts ``n`` chats
(chat ids 1..n) that each send ``"<prefix> <i> in chat <c>"`` for i in 0..m-1, the next
one as soon as the bot's ``sendMessage`` for the previous one arrives; ``GET
/bench/wait`` answers when every chat is done: latencies (update queued -> sendMessage),
replies that were not the echo, and the Bot API calls by method. A streamed answer's
first post is its preview, edited into the answer later: ``GET /bench/answered?chats=n
&prefix=p`` counts the chats 1..n that were sent the echo of ``"<p> 0 in chat <c>"``, in a
``sendMessage`` or an ``editMessageText`` the fake accepted. ``GET /bench/stats`` is
``{"cpu_s": s}``.
"""

from __future__ import annotations

import asyncio
import collections
import resource
import sys
import time
from typing import Any

from aiohttp import web

from tests.fakes.telegram_api import FakeTelegram


class _Run:
    def __init__(self, chats: int, per_chat: int, prefix: str) -> None:
        self.per_chat = per_chat
        self.prefix = prefix
        self.next = dict.fromkeys(range(1, chats + 1), 0)  # chat id -> next message index
        self.asked: dict[int, float] = {}
        self.latencies: list[float] = []
        self.failed = 0
        self.methods: collections.Counter[str] = collections.Counter()
        self.started = time.perf_counter()
        self.wall_s = 0.0
        self.done = asyncio.Event()

    def text(self, chat: int, i: int) -> str:
        return f"{self.prefix} {i} in chat {chat}"


class _DrivingFake(FakeTelegram):
    def __init__(self) -> None:
        super().__init__()
        self.run: _Run | None = None
        self.shown: set[tuple[int, str]] = set()  # (chat, text) sent or edited in

    def add_routes(self, app: web.Application) -> None:
        super().add_routes(app)
        app.router.add_post("/bench/run", self._start_run)
        app.router.add_get("/bench/wait", self._wait_run)
        app.router.add_get("/bench/stats", self._stats)
        app.router.add_get("/bench/answered", self._answered)

    def _ask(self, run: _Run, chat: int) -> None:
        run.asked[chat] = time.perf_counter()
        self.message(run.text(chat, run.next[chat]), chat_id=chat, user_id=chat)

    async def _api(self, request: web.Request) -> web.Response:
        response = await super()._api(request)
        self.calls.clear()  # counted per run below, not kept: a long run holds nothing
        if self.run is not None:
            self.run.methods[request.match_info["method"]] += 1
        return response

    def _shown(self, params: dict[str, Any], response: web.Response) -> None:
        if response.status == 200:
            self.shown.add((int(params.get("chat_id", 0)), str(params.get("text", ""))))

    async def _m_editMessageText(self, params: dict[str, Any]) -> web.Response:
        response = await super()._m_editMessageText(params)
        self._shown(params, response)
        return response

    async def _m_sendMessage(self, params: dict[str, Any]) -> web.Response:
        response = await super()._m_sendMessage(params)
        self._shown(params, response)
        run, chat = self.run, params["chat_id"]
        if run is None or chat not in run.next:
            return response
        run.latencies.append(time.perf_counter() - run.asked[chat])
        if params.get("text") != "echo: " + run.text(chat, run.next[chat]):
            run.failed += 1
        run.next[chat] += 1
        if run.next[chat] < run.per_chat:
            self._ask(run, chat)
        elif all(i >= run.per_chat for i in run.next.values()):
            run.wall_s = time.perf_counter() - run.started
            run.done.set()
        return response

    async def _start_run(self, request: web.Request) -> web.Response:
        spec = await request.json()
        run = self.run = _Run(int(spec["chats"]), int(spec["per_chat"]), str(spec["prefix"]))
        self.shown.clear()  # what this run was sent only: a long bench holds nothing
        for chat in run.next:
            self._ask(run, chat)
        return web.json_response({"ok": True})

    async def _wait_run(self, request: web.Request) -> web.Response:
        run = self.run
        assert run is not None, "no run started"
        await run.done.wait()
        self.run = None
        return web.json_response(
            {
                "latencies": run.latencies,
                "failed": run.failed,
                "wall_s": run.wall_s,
                "methods": dict(run.methods),
            }
        )

    async def _answered(self, request: web.Request) -> web.Response:
        chats, prefix = int(request.query["chats"]), request.query["prefix"]
        answered = sum(
            (c, f"echo: {prefix} 0 in chat {c}") in self.shown for c in range(1, chats + 1)
        )
        return web.json_response({"answered": answered})

    async def _stats(self, request: web.Request) -> web.Response:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return web.json_response({"cpu_s": usage.ru_utime + usage.ru_stime})


async def _serve() -> None:
    fake = _DrivingFake()
    await fake.start()
    print(f"PORT {fake.port} TOKEN {fake.token}", flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # until the parent closes our stdin
    await fake.stop()


if __name__ == "__main__":
    asyncio.run(_serve())
