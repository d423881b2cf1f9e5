"""Waiting for an MCP server that is slower than its connect timeout to be retried into
ready (the stdio and HTTP suites both need it)."""

from __future__ import annotations

from bot.config.mcp import MCPServerSettings, MCPSettings
from tests.fakes.waiting import until
from tools.mcp.manager import MCPManager
from tools.registry import ToolRegistry


async def connects_after_retries(settings: MCPServerSettings) -> None:
    """The server ``slow`` with ``settings`` is retried until it is ready, its tools
    registered, after at least one failed attempt."""
    registry = ToolRegistry()
    manager = MCPManager(MCPSettings(servers={"slow": settings}, retry_initial_s=0.05), registry)
    manager.start()
    try:
        await until(lambda: manager.servers["slow"].status.state == "ready", 40)
        assert manager.servers["slow"].status.attempts >= 2 and "mcp_slow_echo" in registry
    finally:
        await manager.stop()
