"""An MCP server's tool as a registry ``Tool``: same prepare_call, cast and validation.

Each remote tool becomes a small ``Tool`` subclass built at listing time, so the base
class checks its (cleaned) schema once, exactly as for a built-in, and a schema the
validator refuses is skipped like an uncleanable one. The model sees the ``wire``
schema; arguments are validated against the ``check`` schema (nullability kept).
"""

from __future__ import annotations

import asyncio
import logging
import mimetypes
import re
from typing import TYPE_CHECKING, Any, ClassVar

from bot.agent.toolbox import ToolContext
from bot.errors import ToolError
from tools.base import Tool
from tools.mcp.results import ResultFile
from tools.schema import UncleanableSchema, clean_schema
from tools.send_file import attach, chat_root, write_new

if TYPE_CHECKING:
    from tools.mcp.server import MCPServer, RemoteTool

log = logging.getLogger(__name__)

MAX_DESCRIPTION = 1024
MAX_FILE_STEM = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")  # as tools/mcp/names.py cleans a tool's name
# Types a tool returns that the system's MIME table may not know (audio/wav was .bin).
_SUFFIXES = {
    "audio/wav": ".wav",
    "audio/x-wav": ".wav",
    "audio/wave": ".wav",
    "audio/webm": ".webm",
    "audio/ogg": ".ogg",
    "audio/mpeg": ".mp3",
    "audio/mp4": ".m4a",
    "image/webp": ".webp",
}


class MCPTool(Tool):
    """Base of the generated classes; never discovered or registered itself."""

    _plugin_discoverable = False
    remote_name: ClassVar[str] = ""
    repeatable: ClassVar[bool] = False  # readOnlyHint or idempotentHint: safe to resend
    server: ClassVar[MCPServer]

    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        outcome = await self.server.call(self.remote_name, kwargs, repeatable=self.repeatable)
        if outcome.is_error:
            raise ToolError(outcome.text)
        if not outcome.files or ctx.workspace is None:
            return outcome.text
        sent = [await self._forward(ctx, n, f) for n, f in enumerate(outcome.files, 1)]
        return outcome.text + "\n" + "\n".join(sent)

    async def _forward(self, ctx: ToolContext, n: int, file: ResultFile) -> str:
        """A file the tool returned goes to the user with the answer (send_file's way)."""
        mime = file.mime.split(";")[0].strip().lower()
        suffix = _SUFFIXES.get(mime) or mimetypes.guess_extension(mime) or ".bin"
        # The server names its tools: 'charts/render' or '../../x' is no file name.
        stem = _UNSAFE.sub("_", self.remote_name)[:MAX_FILE_STEM]
        name = f"{stem}-{n}{suffix}"
        try:
            path = await asyncio.to_thread(write_new, chat_root(ctx) / "mcp", name, file.data)
            attach(ctx, path, path.name, "")
        except (ToolError, OSError) as exc:
            return f"[{file.kind} {n} not sent to the user: {exc}]"
        return f"[{file.kind} {n} ({len(file.data):,} bytes) is sent to the user as {path.name}]"


def build_tool(server: MCPServer, remote: RemoteTool, name: str) -> MCPTool | None:
    """The registry tool ``name`` for ``remote`` (see :mod:`tools.mcp.names`), or None
    (logged, naming it) when it cannot be."""
    try:
        schema = clean_schema(remote.input_schema)
    except UncleanableSchema as exc:
        log.warning("MCP server %s: tool %r skipped: %s", server.name, remote.name, exc)
        return None
    description = (remote.description or f"{remote.name} (from MCP server {server.name})").strip()
    attrs: dict[str, Any] = {
        "name": name,
        "description": description[:MAX_DESCRIPTION],
        "parameters": schema.check,
        "wire_parameters": schema.wire,
        "remote_name": remote.name,
        "server": server,
        "read_only": remote.read_only,
        "repeatable": remote.repeatable,
        "__module__": __name__,
    }
    try:
        cls: type[MCPTool] = type(f"MCPTool_{name}", (MCPTool,), attrs)
        cls.prepare()
    except TypeError as exc:  # the base class refused the schema
        log.warning("MCP server %s: tool %r skipped: %s", server.name, remote.name, exc)
        return None
    tool: MCPTool = cls()
    return tool
