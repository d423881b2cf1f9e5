"""Tools used only by tests, registered into a daemon's registry by hand."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from bot.agent.toolbox import ToolContext
from bot.errors import ToolError
from tools.base import Tool


class LookupTool(Tool):
    name = "lookup_city"
    description = "Look up facts about a city."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }
    read_only = True
    _plugin_discoverable = False
    active = 0
    peak = 0

    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        type(self).active += 1
        type(self).peak = max(type(self).peak, type(self).active)
        await asyncio.sleep(0.05)
        type(self).active -= 1
        return f"{kwargs['city']} has 2 million people"


class AddTool(Tool):
    name = "add_numbers"
    description = "Add two integers."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    read_only = True
    _plugin_discoverable = False

    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        return str(kwargs["a"] + kwargs["b"])


class ExplodingTool(Tool):
    name = "explode"
    description = "Always fails."
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    _plugin_discoverable = False

    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        raise RuntimeError("boom")


class PoliteFailTool(Tool):
    name = "polite_fail"
    description = "Fails with a ToolError."
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    _plugin_discoverable = False

    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        raise ToolError("the service said no")


TEST_TOOLS = (LookupTool, AddTool, ExplodingTool, PoliteFailTool)
