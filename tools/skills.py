"""``read_skill``: the instructions of one skill from the prompt's catalog, on demand."""

from __future__ import annotations

from typing import Any, ClassVar

from bot.agent.toolbox import ToolContext
from bot.errors import ToolError
from tools.base import Tool


class ReadSkillTool(Tool):
    name = "read_skill"
    description = (
        "Read the full instructions of a skill listed in the system prompt's Skills "
        "catalog. Call it before doing the task the skill describes."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 64}},
        "required": ["name"],
        "additionalProperties": False,
    }
    read_only = True
    offload_exempt = True  # the model asked for these instructions: never cut them

    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        skills = ctx.services.skills
        if skills is None:
            raise ToolError("skills are not available in this daemon")
        return skills.read(ctx.workspace_name, str(kwargs["name"]))
