"""Every configured MCP server, and their tools in the daemon's tool registry.

The daemon starts the manager after ``ready:`` (servers connect in the background, so a
slow or broken one never delays start-up) and stops it before closing the rest. Each
successful listing replaces that server's tools in the registry, which also drops the
registry's cached definitions, so a ``tools/list_changed`` reaches the next request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import asdict

from bot.config.mcp import MCPSettings
from tools.mcp.names import tool_names
from tools.mcp.server import MCPServer
from tools.mcp.tool import build_tool
from tools.registry import ToolRegistry

log = logging.getLogger(__name__)

# Exported per server as ``<name>{server="..."}`` (field of Counters, help text).
METRICS = (
    ("bot_mcp_calls", "calls", "MCP tool calls by server"),
    ("bot_mcp_errors", "errors", "MCP tool calls that ended in an Error result"),
    ("bot_mcp_timeouts", "timeouts", "MCP tool calls that timed out"),
    ("bot_mcp_reconnects", "reconnects", "Reconnects after a lost MCP connection"),
)


class MCPManager:
    """Owns one :class:`MCPServer` per enabled ``[mcp.servers.<name>]``."""

    def __init__(self, settings: MCPSettings, registry: ToolRegistry) -> None:
        self._registry = registry
        registry.max_offered = settings.max_tools_per_request
        self._max_tools = settings.max_tools_per_server
        self.capped: dict[str, int] = {}  # server -> listed tools left out by the cap
        self._registered: dict[str, list[str]] = {}
        self._configured = frozenset(settings.servers)  # who owns a name: see tools.mcp.names
        self.servers: dict[str, MCPServer] = {
            name: MCPServer(
                name,
                server,
                self._install,
                retry_initial_s=settings.retry_initial_s,
                retry_max_s=settings.retry_max_s,
                ping_interval_s=settings.ping_interval_s,
                max_result_chars=settings.max_result_chars,
            )
            for name, server in sorted(settings.enabled_servers().items())
        }

    def start(self) -> None:
        for server in self.servers.values():
            server.start()

    async def stop(self) -> None:
        await asyncio.gather(*(s.stop() for s in self.servers.values()))
        for name in list(self._registered):
            self._uninstall(name)

    def states(self) -> dict[str, str]:
        """``mcp:<name>`` -> state, for /healthz (informational: never fails health)."""
        return {f"mcp:{name}": server.state for name, server in self.servers.items()}

    def counters(self) -> Mapping[str, Mapping[str, float]]:
        """Per server: calls, errors, timeouts, reconnects (see :data:`METRICS`)."""
        return {name: asdict(server.counters) for name, server in self.servers.items()}

    def tool_names(self, server: str) -> list[str]:
        """The registry names of ``server``'s tools (those that could be cleaned), in
        the order of their tools' own names."""
        return list(self._registered.get(server, []))

    def remote_name(self, name: str) -> str:
        """The server's own name for registry tool ``name``."""
        tool = self._registry.get(name)
        return str(getattr(tool, "remote_name", name))

    def _install(self, server: MCPServer) -> None:
        """Replace ``server``'s tools in the registry with its latest listing (at most
        ``max_tools_per_server`` of them: each costs a schema check now and room in
        every request)."""
        self._uninstall(server.name)
        workspaces = server.settings.workspaces
        scope = frozenset(workspaces) if workspaces is not None else None
        # By name, not in the server's order: one listing its tools in a different order
        # each time (a hash map) must not install a different set after each restart.
        listed = sorted(server.status.tools, key=lambda t: t.name)
        self.capped[server.name] = max(0, len(listed) - self._max_tools)
        if self.capped[server.name]:
            log.warning(
                "MCP server %s lists %d tools; only the first %d are installed "
                "(by name; mcp.max_tools_per_server; enabled_tools picks which)",
                server.name,
                len(listed),
                self._max_tools,
            )
        named = tool_names(
            server.name, (t.name for t in listed), self._configured, self._reserved()
        )
        names: list[str] = []
        for remote in listed[: self._max_tools]:
            tool = build_tool(server, remote, named[remote.name])
            if tool is None:
                continue
            try:
                self._registry.register(tool, builtin=False, workspaces=scope)
            except ValueError as exc:
                log.warning("MCP server %s: tool %r skipped: %s", server.name, remote.name, exc)
                continue
            names.append(tool.name)
        self._registered[server.name] = names

    def _reserved(self) -> set[str]:
        """The registry's names that are not MCP tools (built-ins, plugins)."""
        mcp = {name for names in self._registered.values() for name in names}
        return set(self._registry.names()) - mcp

    def _uninstall(self, server: str) -> None:
        for name in self._registered.pop(server, []):
            self._registry.unregister(name)
