"""PTB's aiohttp transport honours the proxy environment as httpx does, read once."""

from __future__ import annotations

import json

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from channels.telegram.transport import AiohttpRequest

ANSWER = {"ok": True, "result": {"id": 1, "is_bot": True, "first_name": "bot"}}


async def _server(seen: list[str], who: str) -> TestServer:
    async def handle(request: web.Request) -> web.Response:
        seen.append(f"{who} {request.method} {request.url}")
        return web.json_response(ANSWER)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    server = TestServer(app, host="127.0.0.1", port=0)
    await server.start_server()
    return server


@pytest.mark.parametrize("bypassed", [False, True])
async def test_http_proxy_from_the_environment_and_no_proxy(
    monkeypatch: pytest.MonkeyPatch, bypassed: bool
) -> None:
    seen: list[str] = []
    api = await _server(seen, "api")
    proxy = await _server(seen, "proxy")
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1" if bypassed else "example.invalid")
    monkeypatch.delenv("http_proxy", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    request = AiohttpRequest()
    await request.initialize()
    try:
        url = f"http://127.0.0.1:{api.port}/botTOKEN/getMe"
        for _ in range(2):
            assert await request.post(url) == ANSWER["result"]
        monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # read once: not seen now
        assert await request.post(url) == ANSWER["result"]
    finally:
        await request.shutdown()
        await api.close()
        await proxy.close()
    who = "api" if bypassed else "proxy"
    assert seen == [f"{who} POST {url}"] * 3, json.dumps(seen)
