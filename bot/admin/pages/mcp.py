"""MCP: each configured server as the running daemon has it: state (with the last
error), transport, the tools installed and those skipped."""

from __future__ import annotations

from aiohttp import web

from bot.admin.site import PageRoute, View


async def mcp(view: View) -> web.StreamResponse:
    return view.render("mcp.html", servers=list(view.services.agent().mcp_servers()))


ROUTES = [PageRoute("GET", "/admin/mcp", mcp)]
