"""The tool registry: the runner's ``ToolBox``.

It turns whatever the model sent into a validated call or an "Error: ..." result the model
can act on. It never executes a guessed name and never raises out of ``execute``.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from bot.agent.toolbox import ERROR_HINT, FINAL_RESULT, ToolCall, ToolContext, ToolResult
from bot.errors import ToolError
from bot.text import valid_unicode
from tools.base import Tool

logger = logging.getLogger(__name__)

_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
# OpenAI-style APIs refuse a request with more tools than this.
MAX_OFFERED = 128
_MAX_JSON_ERROR = 200


def _normalize(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


def _json_type(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "string" if isinstance(value, str) else type(value).__name__


def _non_finite(value: Any, path: str = "") -> str | None:
    """The path of the first NaN or infinity in ``value``: ``json.loads`` accepts those
    literals and JSON Schema calls them numbers, so no tool would otherwise be spared them."""
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    items: Any = ()
    if isinstance(value, Mapping):
        items = ((f"{path}.{k}" if path else str(k), v) for k, v in value.items())
    elif isinstance(value, list | tuple):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    for where, item in items:
        found = _non_finite(item, where)
        if found is not None:
            return found
    return None


def _valid_text(value: Any) -> Any:
    """``value`` with every string in it (keys too) made valid Unicode: ``json.loads``
    turns half an emoji sent as an escape ("\\ud83d") into a lone surrogate, which no
    tool can write (SQLite, a file, the answer's outbox row all encode UTF-8)."""
    if isinstance(value, str):
        return valid_unicode(value)
    if isinstance(value, Mapping):
        return {valid_unicode(str(k)): _valid_text(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_valid_text(v) for v in value]
    return value


def _stringify(output: Any) -> str:
    """Tools should return str; anything else is made readable rather than rejected."""
    if isinstance(output, str):
        return output or "(no output)"
    if output is None:
        return "(no output)"
    if isinstance(output, bytes):
        return output.decode("utf-8", errors="replace")
    if isinstance(output, Mapping | list | tuple):
        return json.dumps(output, ensure_ascii=False, default=str)
    return str(output)


class ToolRegistry:
    """Holds tool instances by name and implements the ``bot.agent.toolbox.ToolBox`` protocol."""

    def __init__(self, max_offered: int = MAX_OFFERED) -> None:
        self.max_offered = max_offered  # tools per request; the MCP manager sets its own
        self._tools: dict[str, Tool] = {}
        self._builtin: set[str] = set()
        # Tools only some workspaces may use (MCP servers, skills); absent = everywhere.
        self._scope: dict[str, frozenset[str]] = {}
        # Tools a workspace turned off ([workspaces.<name>] disabled_tools).
        self._disabled: dict[str, frozenset[str]] = {}
        self._definitions: dict[frozenset[str], list[dict[str, Any]]] = {}
        self._by_workspace: dict[str, list[dict[str, Any]]] = {}

    def register(
        self, tool: Tool, *, builtin: bool, workspaces: frozenset[str] | None = None
    ) -> None:
        """Add a tool, for every workspace or only ``workspaces``.

        A duplicate or malformed name is a programming error (ValueError).
        """
        name = getattr(tool, "name", None)
        if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
            raise ValueError(f"tool {type(tool).__qualname__} has an invalid name: {name!r}")
        if name in self._tools:
            raise ValueError(f"tool {name!r} is already registered")
        if not isinstance(getattr(tool, "description", None), str):
            raise ValueError(f"tool {name!r} has no description")
        tool.require_parameters()
        self._tools[name] = tool
        if builtin:
            self._builtin.add(name)
        if workspaces is not None:
            self._scope[name] = workspaces
        self._definitions.clear()
        self._by_workspace.clear()

    def prepare(self) -> None:
        """Check every tool's schema and build its validator now (the daemon calls this
        right after ``ready:``, so that neither start-up nor the first turn pays for
        it). A bad schema raises TypeError: plugins and MCP tools were prepared when
        registered, so what fails here is a built-in, which is our bug."""
        for tool in self._tools.values():
            tool.prepare()

    def unregister(self, name: str) -> Tool | None:
        """Remove and return a tool (None when it was not registered)."""
        tool = self._tools.pop(name, None)
        self._builtin.discard(name)
        self._scope.pop(name, None)
        if tool is not None:
            self._definitions.clear()
        self._by_workspace.clear()
        return tool

    def disable(self, workspace: str, names: Iterable[str]) -> None:
        """Hide ``names`` from ``workspace`` (names registered later too, e.g. MCP tools)."""
        self._disabled[workspace] = frozenset(names)
        self._by_workspace.clear()

    def visible(self, name: str, workspace: str) -> bool:
        scope = self._scope.get(name)
        return (
            name in self._tools
            and (scope is None or workspace in scope)
            and name not in self._disabled.get(workspace, ())
        )

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def is_builtin(self, name: str) -> bool:
        return name in self._builtin

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def definitions(self, workspace: str = "default") -> list[dict[str, Any]]:
        """The workspace's tools sorted by name with ``mcp_*`` last, at most
        ``max_offered`` of them (those past it are left out, logged once per tool set).

        Cached per tool set (workspaces that see the same tools share one list), so the
        prompt prefix stays byte-stable and nothing is rebuilt per turn.
        """
        cached = self._by_workspace.get(workspace)
        if cached is not None:
            return cached
        names = frozenset(n for n in self._tools if self.visible(n, workspace))
        cached = self._definitions.get(names)
        if cached is None:
            order = sorted(names, key=lambda n: (n.startswith("mcp_"), n))
            if len(order) > self.max_offered:
                logger.warning(
                    "%d tools for workspace %s; only the first %d are offered to the model "
                    "(mcp.max_tools_per_request), left out: %s",
                    len(order),
                    workspace,
                    self.max_offered,
                    ", ".join(order[self.max_offered : self.max_offered + 5])
                    + (", ..." if len(order) > self.max_offered + 5 else ""),
                )
                order = order[: self.max_offered]
            cached = self._definitions[names] = [self._tools[n].definition() for n in order]
        self._by_workspace[workspace] = cached
        return cached

    def concurrency_safe(self, name: str | None) -> bool:
        tool = self._tools.get(name) if isinstance(name, str) else None
        return tool is not None and tool.concurrency_safe

    def offload_exempt(self, name: str | None) -> bool:
        """final_result and tools that set ``offload_exempt``; unknown names are not exempt."""
        if name == FINAL_RESULT:
            return True
        tool = self._tools.get(name) if isinstance(name, str) else None
        return tool is not None and tool.offload_exempt

    def prepare_call(
        self, name: Any, raw_arguments: Any, workspace: str = "default"
    ) -> tuple[Tool, dict[str, Any]] | str:
        """Resolve, parse, cast and validate one call; a str return is the Error result."""
        if not isinstance(name, str) or not name.strip():
            return (
                f"Error: the tool call has no valid name (got {name!r}); "
                "call one of the available tools by its exact name."
            )
        tool = self._tools.get(name) if self.visible(name, workspace) else None
        if tool is None:
            return f"Error: tool '{name}' not found.{self._suggest(name, workspace)}"
        params = self._coerce_params(tool, raw_arguments)
        if isinstance(params, str):
            return params
        where = _non_finite(params)
        if where is not None:
            return (
                f"Error: argument '{where}' of tool '{name}' is not a finite number "
                "(NaN and Infinity are not allowed); send a real number."
            )
        params = tool.cast_params(tool.without_null_optionals(params))
        problems = tool.validate_params(params)
        if problems:
            return f"Error: invalid arguments for tool '{name}': " + "; ".join(problems)
        return tool, params

    def _suggest(self, name: str, workspace: str) -> str:
        """Hint at a near-identical name; the hint is shown, never executed."""
        wanted = _normalize(name)
        known = [n for n in self._tools if self.visible(n, workspace)]
        matches = [n for n in known if _normalize(n) == wanted] if wanted else []
        return f" Did you mean '{matches[0]}'?" if len(matches) == 1 else ""

    def _coerce_params(self, tool: Tool, raw: Any) -> dict[str, Any] | str:
        """Accept a JSON string, an object, or an object wrapped in {"arguments": ...}."""
        params = self._parse(tool, raw)
        if isinstance(params, str):
            return params
        properties = tool.parameters.get("properties", {})
        if set(params) == {"arguments"} and "arguments" not in properties:
            params = self._parse(tool, params["arguments"])
        return params

    def _parse(self, tool: Tool, raw: Any) -> dict[str, Any] | str:
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return {}
        value = raw
        for _ in range(2):  # a second pass undoes double-encoded JSON ("\"{...}\"")
            if not isinstance(value, str):
                break
            try:
                value = json.loads(value)
            except ValueError as exc:
                detail = str(exc)[:_MAX_JSON_ERROR]
                return f"Error: arguments for tool '{tool.name}' are not valid JSON: {detail}"
        if value is None:  # JSON null: no arguments, like an empty string
            return {}
        if not isinstance(value, Mapping):
            return (
                f"Error: arguments for tool '{tool.name}' must be a JSON object, "
                f"got {_json_type(value)}."
            )
        return dict(_valid_text(value))

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        """Run one call. Failures become Error results; only cancellation propagates."""
        label = call.name if isinstance(call.name, str) else ""
        arguments: dict[str, Any] = {}
        try:
            prepared = self.prepare_call(call.name, call.arguments, ctx.workspace_name)
            if isinstance(prepared, str):
                content, is_error = prepared, True
            else:
                tool, arguments = prepared
                content, is_error = await self._run(tool, arguments, ctx)
        except Exception as exc:  # a registry or schema bug must not kill the turn
            logger.exception("preparing tool call %r failed", label)
            content, is_error = f"Error: tool '{label}' failed: {type(exc).__name__}: {exc}", True
        if is_error:
            content = f"{content}\n\n{ERROR_HINT}"
        return ToolResult(
            call_id=call.id, name=label, content=content, is_error=is_error, arguments=arguments
        )

    async def _run(
        self, tool: Tool, arguments: dict[str, Any], ctx: ToolContext
    ) -> tuple[str, bool]:
        """(text, is_error): a raised ToolError is the way to fail; the text keeps "Error"."""
        try:
            output = await tool.execute(ctx, **arguments)
        except ToolError as exc:
            message = str(exc).removeprefix("Error:").strip()
            text = f"Error: {message}" if message else f"Error: tool '{tool.name}' failed."
            return text, True
        except Exception as exc:
            logger.exception("tool %r failed", tool.name)
            return f"Error: tool '{tool.name}' failed: {type(exc).__name__}: {exc}", True
        text = _stringify(output)
        # Plugins written before ToolError report failure as "Error..." text; honour that.
        return text, text.startswith("Error")
