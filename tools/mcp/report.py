"""``bot doctor`` and ``bot mcp list``: connect to each configured server now, list its tools.

Both run outside the daemon, so a server's state here is what connecting to it right
now gives (the running daemon's live states are in its /healthz). The same manager
and registry as the daemon's are used, so the names shown are the names the model sees
and a tool skipped here (uncleanable schema) is skipped there too.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from bot.config.mcp import MCPSettings
from bot.ops.checks import Check, failed, ok
from tools.mcp.manager import MCPManager
from tools.registry import ToolRegistry


@dataclass(frozen=True, slots=True)
class ServerReport:
    name: str
    transport: str
    state: str
    tools: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    capped: int = 0  # listed tools left out by mcp.max_tools_per_server
    unknown: list[str] = field(default_factory=list)  # enabled_tools the server lists not


async def probe(settings: MCPSettings) -> list[ServerReport]:
    """Connect to every configured server at once, list its tools, disconnect."""
    manager = MCPManager(settings, ToolRegistry())
    try:
        await asyncio.gather(*(s.connect() for s in manager.servers.values()))
        return reports(settings, manager)
    finally:
        await manager.stop()


def reports(settings: MCPSettings, manager: MCPManager) -> list[ServerReport]:
    """Each configured server as ``manager`` has it now: the probe's, or the running
    daemon's (the admin page's MCP list)."""
    out = []
    for name, configured in sorted(settings.servers.items()):
        server = manager.servers.get(name)
        if server is None:
            out.append(ServerReport(name, "-", "off (no command or url)"))
            continue
        names = sorted(manager.tool_names(name))  # as the model sees them, whatever the
        listed = sorted(t.name for t in server.status.tools)  # server's order today
        capped = manager.capped.get(name, 0)
        kept = {manager.remote_name(n) for n in names}
        tried = listed[: len(listed) - capped]
        skipped = [t for t in tried if t not in kept]
        state, unknown = server.state, list(server.status.unknown)
        out.append(ServerReport(name, configured.transport, state, names, skipped, capped, unknown))
    return out


def checks(reports: list[ServerReport]) -> list[Check]:
    """One doctor row per server (off servers are left out: nothing to check)."""
    rows = []
    for r in reports:
        if r.transport == "-":
            continue
        name = f"mcp {r.name}"
        if not r.state.startswith("ready"):
            fix = "check the server's command/url, its logs, and mcp.servers.{r.name}"
            rows.append(failed(name, r.state, fix.format(r=r)))
            continue
        detail = f"{len(r.tools)} tools: {', '.join(r.tools) or '(none)'}"
        if r.skipped:
            detail += f"; skipped (schema): {', '.join(r.skipped)}"
        if r.capped:
            detail += f"; warning: {_capped(r)}"
        if r.unknown:
            detail += f"; warning: {_unknown(r)}"
        rows.append(ok(name, detail))
    return rows


def render(reports: list[ServerReport]) -> str:
    if not reports:
        return "no MCP servers configured ([mcp.servers.<name>] in the config)"
    lines = []
    for r in reports:
        lines.append(f"{r.name} ({r.transport}): {r.state}")
        lines.extend(f"  {name}" for name in r.tools)
        lines.extend(f"  (skipped: {name}, its schema cannot be cleaned)" for name in r.skipped)
        if r.capped:
            lines.append(f"  (warning: {_capped(r)})")
        if r.unknown:
            lines.append(f"  (warning: {_unknown(r)})")
    return "\n".join(lines)


def _capped(r: ServerReport) -> str:
    return (
        f"{r.capped} more listed tools not installed (mcp.max_tools_per_server); "
        f"choose with mcp.servers.{r.name}.enabled_tools"
    )


def _unknown(r: ServerReport) -> str:
    return (
        f"mcp.servers.{r.name}.enabled_tools names tools the server does not list: "
        f"{', '.join(r.unknown)} (a typo?)"
    )
