"""tests.fakes.FakeDiscord in its own process, driving closed-loop chats.

The daemon under test talks to this fake through the real discord.py, as in
production: each user message is a ``MESSAGE_CREATE`` dispatch on the gateway
WebSocket, each answer a REST ``POST /channels/{id}/messages``. The fake's CPU is
billed to this process, not to the daemon. Run as ``python -m
bench.fake_discord_server``: prints ``PORT <n> TOKEN <t>`` once it listens and serves
until stdin closes. Chats are DM channels 900001.., each with a user of its own; a
chat's next message follows the bot's answer there (a post, or the edit that
turns a streamed preview into the answer). The control routes are
bench/driving.py's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import Any

from aiohttp import web

from bench.driving import Driver, Run, serve
from tests.fakes.discord_api import FakeDiscord, Handler, user

FIRST_CHAT = 900_000


class _DrivingFake(FakeDiscord):
    def __init__(self) -> None:
        super().__init__()
        self.driver = Driver(lambda n: list(range(FIRST_CHAT + 1, FIRST_CHAT + n + 1)), self._ask)
        self.after_post = self._posted

    def _posted(self, message: dict[str, Any]) -> None:
        self.driver.answered(int(message["channel_id"]), str(message["content"]))

    def add_routes(self, app: web.Application) -> None:
        super().add_routes(app)
        self.driver.add_routes(app)

    def _ask(self, run: Run, chat: Hashable) -> None:
        assert isinstance(chat, int)
        author = user(chat - FIRST_CHAT + 10_000, f"user{chat - FIRST_CHAT}")
        self.user_message(run.asking(chat), channel_id=chat, author=author)

    async def _edit_message(self, request: web.Request, body: dict[str, Any]) -> web.Response:
        response = await super()._edit_message(request, body)
        if response.status == 200 and "content" in body:
            chat = int(request.match_info["channel_id"])
            self.driver.answered(chat, str(body.get("content") or ""), edit=True)
        return response

    def _rest(self, route: str, handler: Handler) -> Callable[[web.Request], Any]:
        serve_route = super()._rest(route, handler)

        async def counted(request: web.Request) -> web.Response:
            response: web.Response = await serve_route(request)
            self.calls.clear()  # counted per run below, not kept: a long run holds nothing
            self.driver.called(route)
            return response

        return counted


if __name__ == "__main__":
    fake = _DrivingFake()
    asyncio.run(serve(fake, "TOKEN", fake.token))
