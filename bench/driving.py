"""Closed-loop chats driven from inside a fake platform server (its own process).

Each fake (Telegram, Slack, Discord in bench/fake_*_server.py) says a user's message
its own way and calls :meth:`Run.answered` with each answer the bot posts; the next
message of that chat follows at once. The bench talks to the fake's control routes:

``POST /bench/run {"chats": n, "per_chat": m, "prefix": "p", ...}`` starts ``n`` chats
that each send ``"<prefix> <i> in chat <c>"`` for i in 0..m-1 (the rest of the spec is
the fake's own: where to deliver events; ``"tail": t``: each answer is the echo followed
by ``t``, a streamed model's long answer); ``GET /bench/wait`` answers when every chat
is done: latencies (message said -> answer posted), answers that were not the echo,
the platform calls by method, and per message the platform calls that wrote its answer
(previews, the final) and when the first of them showed answer text (``time.monotonic``:
CLOCK_MONOTONIC, one clock for every process on the machine, so the fake model's
timestamps compare); ``GET /bench/stats`` is ``{"cpu_s": s}``.
"""

from __future__ import annotations

import asyncio
import collections
import resource
import sys
import time
from collections.abc import Callable, Hashable
from typing import Any

from aiohttp import web

from tests.fakes.loopback import LoopbackServer


class Run:
    """One run's chats: what each is to say next, and what came back."""

    def __init__(self, chats: list[Hashable], per_chat: int, prefix: str, spec: dict[str, Any]):
        self.per_chat = per_chat
        self.prefix = prefix
        self.spec = spec  # the fake's own part of the request (e.g. the events URL)
        self.tail = str(spec.get("tail", ""))  # what follows the echo in each answer
        self.next = dict.fromkeys(chats, 0)  # chat -> next message index
        self.asked: dict[Hashable, float] = {}
        self.latencies: list[float] = []
        self.failed = 0
        self.methods: collections.Counter[str] = collections.Counter()
        self.shown: dict[str, float] = {}  # message -> when answer text first showed
        self.writes: collections.Counter[str] = collections.Counter()  # message -> calls
        self.started = time.perf_counter()
        self.wall_s = 0.0
        self.done = asyncio.Event()

    def text(self, chat: Hashable) -> str:
        return f"{self.prefix} {self.next[chat]} in chat {chat}"

    def asking(self, chat: Hashable) -> str:
        """The chat's next message, timed from now."""
        self.asked[chat] = time.perf_counter()
        return self.text(chat)

    def answered(self, chat: Hashable, text: str, *, edit: bool = False) -> bool:
        """``text`` posted (or, ``edit``, edited in) in ``chat``; True when the chat has a
        next message to say. A streamed answer's preview (a post of the answer's start)
        and edits that are not yet the answer are not the answer; any other post is a
        wrong one, counted."""
        if chat not in self.next or self.next[chat] >= self.per_chat:
            return False
        asked = self.text(chat)
        echo = "echo: " + asked + self.tail
        self.writes[asked] += 1
        start = text.rstrip("…").rstrip()
        if start and echo.startswith(start):
            self.shown.setdefault(asked, time.monotonic())
        if text != echo and (edit or echo.startswith(start)):
            return False
        self.latencies.append(time.perf_counter() - self.asked[chat])
        if text != echo:
            self.failed += 1
        self.next[chat] += 1
        if self.next[chat] < self.per_chat:
            return True
        if all(i >= self.per_chat for i in self.next.values()):
            self.wall_s = time.perf_counter() - self.started
            self.done.set()
        return False

    def result(self) -> dict[str, Any]:
        return {
            "latencies": self.latencies,
            "failed": self.failed,
            "wall_s": self.wall_s,
            "methods": dict(self.methods),
            "shown": self.shown,
            "writes": dict(self.writes),
        }


class Driver:
    """The control routes of a driving fake. ``chats(n)`` names a run's chats; ``ask(run,
    chat)`` says the chat's next message (:meth:`Run.asking`); ``starting()`` runs as
    each run starts."""

    def __init__(
        self,
        chats: Callable[[int], list[Hashable]],
        ask: Callable[[Run, Hashable], None],
        starting: Callable[[], None] = lambda: None,
    ) -> None:
        self._chats = chats
        self._ask = ask
        self._starting = starting  # called as each run starts
        self.run: Run | None = None

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/bench/run", self._start)
        app.router.add_get("/bench/wait", self._wait)
        app.router.add_get("/bench/stats", self._stats)

    def called(self, method: str) -> None:
        """One platform call by the bot (counted per run)."""
        if self.run is not None:
            self.run.methods[method] += 1

    def answered(self, chat: Hashable, text: str, *, edit: bool = False) -> None:
        """The bot posted (``edit``: edited in) ``text`` in ``chat``: once that is the
        answer, the chat says its next message."""
        run = self.run
        if run is not None and run.answered(chat, text, edit=edit):
            self._ask(run, chat)

    async def _start(self, request: web.Request) -> web.Response:
        spec = await request.json()
        chats = self._chats(int(spec["chats"]))
        self._starting()
        run = self.run = Run(chats, int(spec["per_chat"]), str(spec["prefix"]), spec)
        for chat in chats:
            self._ask(run, chat)
        return web.json_response({"ok": True})

    async def _wait(self, request: web.Request) -> web.Response:
        run = self.run
        assert run is not None, "no run started"
        await run.done.wait()
        self.run = None
        return web.json_response(run.result())

    async def _stats(self, request: web.Request) -> web.Response:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return web.json_response({"cpu_s": usage.ru_utime + usage.ru_stime})


async def serve(fake: LoopbackServer, *words: str) -> None:
    """Start ``fake``, print ``PORT <n> <words>`` (bench/procs.py reads it) and serve
    until the parent closes our stdin."""
    await fake.start()
    print(" ".join(["PORT", str(fake.port), *words]), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await fake.stop()
