"""tests.fakes.FakeSlack in its own process, driving closed-loop chats.

The daemon under test talks to this fake through the real slack-bolt and slack_sdk, as
in production: Web API calls here, and each user message delivered over the Socket
Mode WebSocket (an ``events_api`` envelope the bot acknowledges) or, with ``"deliver":
"http"`` in the run's spec, as a signed HTTP Events API POST to ``events_url`` (the
daemon's web app). The fake's CPU is billed to this process, not to the daemon. Run as
``python -m bench.fake_slack_server``: prints ``PORT <n>`` once it listens and serves
until stdin closes. Chats are DMs ``D0001``.., each with a user of its own; a chat's
next message follows the bot's answer there (a ``chat.postMessage``, or the
``chat.update`` or ``chat.stopStream`` that turns a streamed preview into the answer).
With ``"thread": true`` in the run's spec each chat is a thread in its DM (whose root is
not in the history, so the thread brings no earlier context): answers there are thread
replies, and a streamed one is Slack's native stream (``chat.startStream`` and
``chat.appendStream``). The control routes are bench/driving.py's.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Hashable
from typing import Any

import aiohttp
from aiohttp import web

from bench.driving import Driver, Run, serve
from tests.fakes.slack_api import FakeSlack, sign


def _ok(response: web.Response) -> bool:
    """Whether a Web API answer says ``"ok": true``."""
    assert isinstance(response.body, bytes)
    return bool(json.loads(response.body).get("ok"))


class _DrivingFake(FakeSlack):
    def __init__(self) -> None:
        super().__init__()
        self.driver = Driver(lambda n: [f"D{c:04d}" for c in range(1, n + 1)], self._ask)
        self._http: aiohttp.ClientSession | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def add_routes(self, app: web.Application) -> None:
        super().add_routes(app)
        self.driver.add_routes(app)

    async def stop(self) -> None:
        if self._http is not None:
            await self._http.close()
        await super().stop()

    def _ask(self, run: Run, chat: Hashable) -> None:
        assert isinstance(chat, str)
        thread = {"thread_ts": f"1600000000.{chat[1:]}"} if run.spec.get("thread") else {}
        event = self.message(run.asking(chat), channel=chat, user="U" + chat[1:], **thread)
        if run.spec.get("deliver") == "http":
            say = self._post_event(str(run.spec["events_url"]), event)
        else:
            say = self._push(event)
        task = asyncio.get_running_loop().create_task(say)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _push(self, event: dict[str, Any]) -> None:
        await self.push(event)

    async def _post_event(self, url: str, event: dict[str, Any]) -> None:
        """Slack's HTTP delivery: the event signed with the app's signing secret."""
        if self._http is None:
            self._http = aiohttp.ClientSession()
        raw = json.dumps(self.body(event)).encode()
        stamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": sign(self.signing_secret, stamp, raw),
        }
        async with self._http.post(url, data=raw, headers=headers) as resp:
            if resp.status != 200:
                raise RuntimeError(f"the bot answered an event with HTTP {resp.status}")

    async def _api(self, request: web.Request) -> web.StreamResponse:
        response = await super()._api(request)
        self.calls.clear()  # counted per run below, not kept: a long run holds nothing
        self.acks.clear()
        self.driver.called(request.match_info["method"])
        return response

    async def _m_chat_postMessage(self, params: dict[str, Any]) -> web.Response:
        response = await super()._m_chat_postMessage(params)
        self.driver.answered(str(params.get("channel")), str(params.get("text")))
        return response

    async def _m_chat_update(self, params: dict[str, Any]) -> web.Response:
        response = await super()._m_chat_update(params)
        self.driver.answered(str(params.get("channel")), str(params.get("text")), edit=True)
        return response

    async def _m_chat_startStream(self, params: dict[str, Any]) -> web.Response:
        response = await super()._m_chat_startStream(params)
        if _ok(response):
            self.driver.answered(str(params.get("channel")), self._streamed(params))
        return response

    async def _m_chat_appendStream(self, params: dict[str, Any]) -> web.Response:
        return self._stream_grew(params, await super()._m_chat_appendStream(params))

    async def _m_chat_stopStream(self, params: dict[str, Any]) -> web.Response:
        return self._stream_grew(params, await super()._m_chat_stopStream(params))

    def _stream_grew(self, params: dict[str, Any], response: web.Response) -> web.Response:
        """The stream's whole text so far, as an edit: the answer once it is all there."""
        channel = str(params.get("channel"))
        msg = self._find(channel, str(params.get("ts")))
        if msg is not None and _ok(response):
            self.driver.answered(channel, str(msg["text"]), edit=True)
        return response


if __name__ == "__main__":
    fake = _DrivingFake()
    asyncio.run(serve(fake, "BOT", fake.bot_token, "APP", fake.app_token,
                      "SECRET", fake.signing_secret))  # fmt: skip
