"""tests.fakes.FakeTelegram in its own process, driving closed-loop chats.

The daemon under test polls this fake through the real python-telegram-bot, as in
production; the fake's CPU (and the driver's) is billed to this process, not to the
daemon. Run as ``python -m bench.fake_telegram_server``: prints ``PORT <n> TOKEN <t>``
once it listens and serves until stdin closes. Chats are chat ids 1..n, each a user of
the same id; a chat's next message follows the bot's answer to it (a ``sendMessage``,
or the edit that turns a streamed preview into the answer). The control routes are
bench/driving.py's, and ``GET /bench/answered?chats=n&prefix=p`` counts the chats 1..n
that were sent the echo of ``"<p> 0 in chat <c>"``, in a ``sendMessage`` or an
``editMessageText`` the fake accepted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from typing import Any

from aiohttp import web

from bench.driving import Driver, Run, serve
from tests.fakes.telegram_api import FakeTelegram


class _DrivingFake(FakeTelegram):
    def __init__(self) -> None:
        super().__init__()
        self.driver = Driver(lambda n: list(range(1, n + 1)), self._ask, self._starting)
        self.answers_seen: set[tuple[int, str]] = set()  # (chat, text) sent or edited in

    def add_routes(self, app: web.Application) -> None:
        super().add_routes(app)
        self.driver.add_routes(app)
        app.router.add_get("/bench/answered", self._answered)

    def _ask(self, run: Run, chat: Hashable) -> None:
        assert isinstance(chat, int)
        self.message(run.asking(chat), chat_id=chat, user_id=chat)

    def _starting(self) -> None:
        self.answers_seen.clear()  # what this run was sent only: a long bench holds nothing

    async def _api(self, request: web.Request) -> web.Response:
        response = await super()._api(request)
        self.calls.clear()  # counted per run below, not kept: a long run holds nothing
        self.driver.called(request.match_info["method"])
        return response

    def _shown(self, params: dict[str, Any], response: web.Response, *, edit: bool) -> None:
        if response.status != 200:
            return
        chat, text = int(params.get("chat_id", 0)), str(params.get("text", ""))
        self.answers_seen.add((chat, text))
        self.driver.answered(chat, text, edit=edit)

    async def _m_editMessageText(self, params: dict[str, Any]) -> web.Response:
        response = await super()._m_editMessageText(params)
        self._shown(params, response, edit=True)
        return response

    async def _m_sendMessage(self, params: dict[str, Any]) -> web.Response:
        response = await super()._m_sendMessage(params)
        self._shown(params, response, edit=False)
        return response

    async def _answered(self, request: web.Request) -> web.Response:
        chats, prefix = int(request.query["chats"]), request.query["prefix"]
        answered = sum(
            (c, f"echo: {prefix} 0 in chat {c}") in self.answers_seen for c in range(1, chats + 1)
        )
        return web.json_response({"answered": answered})


if __name__ == "__main__":
    fake = _DrivingFake()
    asyncio.run(serve(fake, "TOKEN", fake.token))
