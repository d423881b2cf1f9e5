"""A real MCP server (the official SDK's low-level ``Server``) for the client's tests.

The low-level server returns whatever schema a tool declares, so it can advertise the
schemas real servers emit (``{}``, ``$ref``, nullable unions, a recursive ``$ref``).
Run it as a stdio child (``python tests/fakes/mcp_server.py``) or serve
:func:`http_app` with uvicorn for streamable HTTP (see tests/fakes/mcp_http.py).
``FAKE_MCP_JUNK=1`` makes the stdio child write a non-JSON line to stdout first;
``FAKE_MCP_TOOLS=N`` adds N echo-like tools ``t0``...; ``FAKE_MCP_BLOWUP=L`` adds the tool
``blowup`` whose 1 KB schema inlines to 4**L nodes (each definition refers to the next
four times);
``FAKE_MCP_NAMES=a,b`` adds tools with those names, each answering ``<name> on
<FAKE_MCP_LABEL>`` (to tell servers whose names collide apart);
``FAKE_MCP_IMAGE_NAMES=a,b`` adds tools with those names (``../x``, ``charts/render``: a
server names its tools), each answering like ``image``.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import anyio
import mcp_types as types
from mcp.server import stdio as sdk_stdio
from mcp.server.lowlevel import Server

NULLABLE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "note": {"type": ["string", "null"], "description": "A note"},
        "count": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    },
    "required": ["note"],
}
REF_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}},
    "type": "object",
    "properties": {
        "point": {"$ref": "#/$defs/Point"},
        "tags": {"type": "array", "examples": [["a"]]},
    },
    "examples": [{"point": {"x": 1}}],
}
RECURSIVE_SCHEMA: dict[str, Any] = {
    "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
    "type": "object",
    "properties": {"node": {"$ref": "#/$defs/Node"}},
}
TEXT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}


def blowup_schema(levels: int, width: int = 4) -> dict[str, Any]:
    """Small to send, ``width ** levels`` nodes once every ``$ref`` is inlined."""
    defs: dict[str, Any] = {
        f"L{i}": {
            "type": "object",
            "properties": {f"p{j}": {"$ref": f"#/$defs/L{i + 1}"} for j in range(width)},
        }
        for i in range(levels)
    }
    defs[f"L{levels}"] = {"type": "string"}
    return {"type": "object", "$defs": defs, "properties": {"root": {"$ref": "#/$defs/L0"}}}


def _tool(name: str, schema: dict[str, Any], description: str = "", **kw: Any) -> dict[str, Any]:
    """A tools/list entry as raw JSON: the SDK's own models would refuse ``{}``."""
    entry: dict[str, Any] = {"name": name, "description": description or name}
    entry["inputSchema"] = schema
    if kw.get("read_only"):
        entry["annotations"] = {"readOnlyHint": True}
    return entry


def _env_tools() -> list[dict[str, Any]]:
    tools = []
    if os.environ.get("FAKE_MCP_BLOWUP"):
        levels = int(os.environ["FAKE_MCP_BLOWUP"])
        tools.append(_tool("blowup", blowup_schema(levels), "Exponentially branching $refs."))
    count = int(os.environ.get("FAKE_MCP_TOOLS", "0"))
    tools.extend(_tool(f"t{i}", TEXT_SCHEMA, f"Tool number {i}.") for i in range(count))
    tools.extend(_tool(name, {}, "Says its name and server.") for name in _named())
    tools.extend(_tool(name, {}, "Text and an image.") for name in _named("IMAGE_"))
    return tools


def _named(kind: str = "") -> list[str]:
    return [n for n in os.environ.get(f"FAKE_MCP_{kind}NAMES", "").split(",") if n]


BASE_TOOLS = [
    _tool("echo", TEXT_SCHEMA, "Echo the text back.", read_only=True),
    _tool("empty_schema", {}, "A tool whose schema is {}."),
    _tool("nullable", NULLABLE_SCHEMA, "Nullable arguments."),
    _tool("refs", REF_SCHEMA, "A $ref, an array without items and examples."),
    _tool("recursive", RECURSIVE_SCHEMA, "A recursive schema: cannot be cleaned."),
    _tool("slow", {"type": "object", "properties": {"seconds": {"type": "number"}}}),
    _tool("pid", {}, "The server's process id."),
    _tool("env", {}, "The server's environment variable names."),
    _tool("image", {}, "Text and an image."),
    _tool("big", {"type": "object", "properties": {"size": {"type": "integer"}}}),
    _tool("fail", {}, "Always an isError result."),
    _tool("add_tool", {}, "Adds the tool 'late' and says the list changed."),
    _tool("junk", {}, "Writes a non-JSON line to stdout, then answers."),
    _tool("sample", {}, "Asks the client's model for a completion (sampling), says how it went."),
    _tool("elicit", {}, "Asks the user for input (elicitation), says how it went."),
    _tool(
        "chatty",
        {"type": "object", "properties": {"lines": {"type": "integer"}}},
        "Logs, reports progress and writes `lines` lines to stderr, then answers.",
    ),
    _tool(
        "changes",
        {"type": "object", "properties": {"times": {"type": "integer"}}},
        "Says `times` times over that its tool list changed, then answers.",
    ),
    _tool(
        "die",
        {"type": "object", "properties": {"marker": {"type": "string"}}},
        "Exits the process mid-call, unless the file `marker` exists (then creates none).",
    ),
    _tool(
        "die_read_only",
        {"type": "object", "properties": {"marker": {"type": "string"}}},
        "As die, but says (readOnlyHint) that calling it again is safe.",
        read_only=True,
    ),
]


def build_server() -> Server[Any]:
    extra: list[dict[str, Any]] = []
    from_env = _env_tools()

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[])  # advertises the capability; see raw_list

    async def raw_list(ctx: Any, call_next: Any) -> Any:
        """The server validates spec results it serializes; a short-circuit is sent as is."""
        if ctx.method == "tools/list":
            return {"tools": [*BASE_TOOLS, *from_env, *extra]}
        return await call_next(ctx)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments or {}
        return await _call(ctx, params.name, args, extra)

    server: Server[Any] = Server("fake-mcp", on_list_tools=list_tools, on_call_tool=call_tool)
    server.middleware.append(raw_list)
    return server


def _text(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error)


async def _call(ctx: Any, name: str, args: dict[str, Any], extra: list[dict[str, Any]]) -> Any:
    if name == "echo":
        return _text(f"echo: {args.get('text')}")
    if name in ("empty_schema", "nullable", "refs"):
        return _text(json.dumps({"tool": name, "args": args}, sort_keys=True))
    if name == "slow":
        await anyio.sleep(float(args.get("seconds", 1)))
        return _text("slept")
    if name == "pid":
        return _text(str(os.getpid()))
    if name == "env":
        return _text(json.dumps(sorted(os.environ)))
    if name == "image" or name in _named("IMAGE_"):
        image = types.ImageContent(data="iVBORw0KGgo=", mime_type="image/png")
        return types.CallToolResult(content=[types.TextContent(text="a chart"), image])
    if name == "big":
        return _text("x" * int(args.get("size", 100)))
    if name == "fail":
        return _text("the widget is broken", error=True)
    if name == "add_tool":
        if not extra:
            extra.append(_tool("late", {}, "Added after start."))
        await ctx.session.send_tool_list_changed()
        return _text("added")
    if name in _named():
        return _text(f"{name} on {os.environ.get('FAKE_MCP_LABEL', '')}")
    if name == "late" or (name[:1] == "t" and name[1:].isdigit()):
        return _text("late tool ran")
    if name == "junk":
        os.write(_wire_fd(), b"this line is not JSON-RPC\n")
        return _text("survived")
    if name in ("sample", "elicit", "chatty", "changes"):
        return await _asks(ctx, name, args)
    if name in ("die", "die_read_only"):
        _die_unless(args.get("marker"))
        return _text("answered on the retry")
    raise ValueError(f"unknown tool {name}")


async def _asks(ctx: Any, name: str, args: dict[str, Any]) -> types.CallToolResult:
    """The server reaching back to the client: requests it may refuse, notifications."""
    import warnings

    warnings.simplefilter("ignore")  # sampling and logging are deprecated in 2026-07-28
    session = ctx.session
    try:
        if name == "sample":
            message = types.SamplingMessage(role="user", content=types.TextContent(text="hi"))
            await session.create_message([message], max_tokens=10)
        elif name == "elicit":
            schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
            await session.elicit_form("Proceed?", schema)
        elif name == "chatty":
            for i in range(int(args.get("lines", 10))):
                os.write(2, f"stderr line {i} ".encode() * 20 + b"\n")
            await session.send_log_message("info", "working", logger="fake")
        elif name == "changes":
            for _ in range(int(args.get("times", 1))):
                await session.send_tool_list_changed()
    except Exception as exc:
        return _text(f"{name}: refused ({exc})")
    return _text(f"{name}: done")


def _die_unless(marker: str | None) -> None:
    """Exit now, leaving ``marker`` behind so the retry on a fresh process answers."""
    if marker and os.path.exists(marker):
        return
    if marker:
        open(marker, "w").close()
    os._exit(3)


def _wire_fd() -> int:
    """The descriptor the protocol really goes out on. The SDK's stdio server moves it off
    fd 1 (stray prints land on stderr), so junk must be written here to reach the client,
    as it does from a server written without the SDK."""
    claim = getattr(sdk_stdio, "_claims", {}).get(1)
    private = getattr(claim, "private_fd", None)
    return private if isinstance(private, int) else 1


async def _main() -> None:
    if os.environ.get("FAKE_MCP_JUNK"):
        os.write(1, b"hello from a chatty server\n")
    server = build_server()
    async with sdk_stdio.stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(_main())
