"""The MCP client against a real streamable HTTP MCP server on 127.0.0.1 (uvicorn)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from bot.agent.toolbox import ToolCall, ToolContext
from bot.config.mcp import MCPServerSettings, MCPSettings
from bot.messages import ChatKey
from tests.fakes.mcp_http import MCPHttpServer
from tests.fakes.mcp_retry import connects_after_retries
from tests.fakes.waiting import until
from tools.mcp.manager import MCPManager
from tools.registry import ToolRegistry

pytestmark = pytest.mark.slow

CTX = ToolContext(chat_key=ChatKey("test", "c1"), user_id="u1")
SECRET = "Bearer http-secret-value"


@pytest_asyncio.fixture
async def http_server() -> AsyncIterator[MCPHttpServer]:
    server = await MCPHttpServer().start()
    yield server
    await server.stop()


async def echo(registry: ToolRegistry, text: str) -> str:
    result = await registry.execute(ToolCall("c1", "mcp_web_echo", {"text": text}), CTX)
    return result.content


async def test_http_tools_headers_and_a_restarted_server(
    http_server: MCPHttpServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    registry = ToolRegistry()
    settings = MCPServerSettings(url=http_server.url, headers={"Authorization": SECRET})
    manager = MCPManager(MCPSettings(servers={"web": settings}, retry_initial_s=0.05), registry)
    manager.start()
    try:
        await until(lambda: manager.servers["web"].status.state == "ready", 20)
        assert "mcp_web_echo" in registry and "mcp_web_empty_schema" in registry
        assert "mcp_web_recursive" not in registry  # skipped alone, with a warning naming it
        assert "MCP server web: tool 'recursive' skipped: recursive $ref" in caplog.text
        assert await echo(registry, "one") == "echo: one"
        assert all(h.get("authorization") == SECRET for h in http_server.headers_seen)

        # A restart loses every session: the next call hears "Session terminated" (404),
        # reconnects once and is retried on the new session.
        await http_server.restart()
        assert await echo(registry, "two") == "echo: two"
        assert manager.counters()["web"]["reconnects"] == 1

        # Down entirely: an Error result, never an exception; back up: works again.
        await http_server.stop()
        down = await registry.execute(ToolCall("c2", "mcp_web_echo", {"text": "x"}), CTX)
        assert down.is_error and "unavailable" in down.content
        await http_server.start()
        await until(lambda: manager.servers["web"].status.state == "ready", 20)
        assert await echo(registry, "three") == "echo: three"
    finally:
        await manager.stop()
    assert SECRET not in caplog.text and "http-secret" not in caplog.text


async def test_sse_when_the_url_says_so() -> None:
    server = await MCPHttpServer(sse=True).start()
    registry = ToolRegistry()
    settings = MCPServerSettings(url=server.url, headers={"Authorization": SECRET})
    assert settings.transport == "sse"
    manager = MCPManager(MCPSettings(servers={"web": settings}), registry)
    try:
        assert await manager.servers["web"].connect()
        assert await echo(registry, "over sse") == "echo: over sse"
        assert any(h.get("authorization") == SECRET for h in server.headers_seen)
    finally:
        await manager.stop()
        await server.stop()


async def test_an_sse_server_slower_than_its_timeout_connects_on_a_longer_retry() -> None:
    """Each POST answered 1.5 s late against connect_timeout_s = 1: every handshake
    timed out at 1 s on every retry; a retry now waits twice as long as the one before."""
    server = await MCPHttpServer(sse=True, slow_posts_s=1.5).start()
    try:
        await connects_after_retries(MCPServerSettings(url=server.url, connect_timeout_s=1))
    finally:
        await server.stop()


async def test_a_server_silent_at_the_handshake_is_retried() -> None:
    """An endpoint that takes the connection and never answers ``initialize`` (a server
    still starting) is given up on after ``connect_timeout_s`` and tried again, not left
    "connecting" for good (the give-up's own cancel used to end the retrying)."""
    held: list[asyncio.StreamWriter] = []

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    listener = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    settings = MCPServerSettings(url=f"http://127.0.0.1:{port}/mcp", connect_timeout_s=0.3)
    manager = MCPManager(
        MCPSettings(servers={"mute": settings}, retry_initial_s=0.05), ToolRegistry()
    )
    server = manager.servers["mute"]
    manager.start()
    try:
        await until(lambda: server.status.attempts >= 3 and server.state != "connecting", 20)
        # 0.3 s, then 0.6 s, then 1.2 s: each retry allows twice the last, up to 4x
        assert server.state == "failed: no handshake within 1.2 s"
    finally:
        await manager.stop()
        for writer in held:
            writer.close()
        listener.close()
        await listener.wait_closed()
