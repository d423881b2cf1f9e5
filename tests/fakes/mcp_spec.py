"""A real MCP server (the official SDK's low-level ``Server``) whose tools a test spells.

Run it as a stdio child (``python tests/fakes/mcp_spec.py``) with ``FAKE_MCP_SPEC`` set
to a JSON list of tools as ``tools/list`` sends them (``name``, ``inputSchema``, any
schema however odd), each optionally with ``result``: the ``tools/call`` result it
answers (MCP's JSON, e.g. audio content). A tool without one answers its arguments as
JSON, so a test sees exactly what reached the server.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import mcp_types as types
from mcp.server import stdio as sdk_stdio
from mcp.server.lowlevel import Server


def build_server(spec: list[dict[str, Any]]) -> Server[Any]:
    listed = [{k: v for k, v in tool.items() if k != "result"} for tool in spec]
    results = {tool["name"]: tool["result"] for tool in spec if "result" in tool}

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[])  # advertises the capability; see raw_list

    async def raw_list(ctx: Any, call_next: Any) -> Any:
        """The server validates spec results it serializes; a short-circuit is sent as is."""
        if ctx.method == "tools/list":
            return {"tools": listed}
        return await call_next(ctx)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name in results:
            return types.CallToolResult.model_validate(results[params.name])
        text = json.dumps(params.arguments or {}, sort_keys=True)
        return types.CallToolResult(content=[types.TextContent(text=text)])

    server: Server[Any] = Server("fake-spec", on_list_tools=list_tools, on_call_tool=call_tool)
    server.middleware.append(raw_list)
    return server


async def _main() -> None:
    server = build_server(json.loads(os.environ.get("FAKE_MCP_SPEC", "[]")))
    async with sdk_stdio.stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(_main())
