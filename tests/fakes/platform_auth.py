"""Tiny loopback fakes of the identity endpoints ``bot doctor`` asks: Slack's
``auth.test`` (POST, Bearer token, always HTTP 200 with ``ok``) and
``apps.connections.open`` (any ``xapp-`` token), and Discord's ``users/@me`` (GET,
``Bot`` token, 401 when wrong). Just enough to check credentials (the full Slack fake
is tests/fakes/slack_api.py)::

    async with FakeSlackAuth() as slack, FakeDiscordAuth() as discord:
        slack.api_url      # for channels.slack.api_url
        discord.api_base   # for channels.discord.api_base
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
from aiohttp import web

from tests.fakes.loopback import LoopbackServer


class _Server(LoopbackServer):
    def __init__(self, token: str) -> None:
        self.token = token
        self.calls: list[str] = []  # the Authorization headers seen


class FakeSlackAuth(_Server):
    def __init__(self, token: str = "xoxb-test-token") -> None:
        super().__init__(token)

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/api/auth.test", self._auth_test)
        app.router.add_post("/api/apps.connections.open", self._connections_open)

    async def _connections_open(self, request: web.Request) -> web.Response:
        """Any ``xapp-`` token opens a (never used) Socket Mode URL; doctor only asks."""
        header = request.headers.get("Authorization", "")
        self.calls.append(header)
        if not header.startswith("Bearer xapp-"):
            return web.json_response({"ok": False, "error": "invalid_auth"})
        return web.json_response({"ok": True, "url": "wss://127.0.0.1:1/link"})

    async def _auth_test(self, request: web.Request) -> web.Response:
        header = request.headers.get("Authorization", "")
        self.calls.append(header)
        if header != f"Bearer {self.token}":
            return web.json_response({"ok": False, "error": "invalid_auth"})
        return web.json_response(
            {"ok": True, "url": "https://test.slack.com/", "team": "Test Team",
             "user": "testbot", "team_id": "T1", "user_id": "U1", "bot_id": "B1"}
        )  # fmt: skip


class FakeDiscordAuth(_Server):
    def __init__(self, token: str = "discord-test-token") -> None:
        super().__init__(token)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/api/v10/users/@me", self._me)

    async def _me(self, request: web.Request) -> web.Response:
        header = request.headers.get("Authorization", "")
        self.calls.append(header)
        if header != f"Bot {self.token}":
            return web.json_response({"message": "401: Unauthorized", "code": 0}, status=401)
        return web.json_response(
            {"id": "1001", "username": "testbot", "discriminator": "0", "bot": True}
        )


@pytest_asyncio.fixture
async def fake_slack_auth() -> AsyncIterator[FakeSlackAuth]:
    async with FakeSlackAuth() as fake:
        yield fake


@pytest_asyncio.fixture
async def fake_discord_auth() -> AsyncIterator[FakeDiscordAuth]:
    async with FakeDiscordAuth() as fake:
        yield fake
