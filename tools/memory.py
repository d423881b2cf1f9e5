"""``remember``: the user says "remember that ..." and it is stored at once."""

from __future__ import annotations

from typing import Any, ClassVar

from bot.agent.toolbox import ToolContext
from bot.errors import ToolError
from tools.base import Tool


class RememberTool(Tool):
    name = "remember"
    description = (
        "Remember a durable fact for later conversations, when the user asks you to "
        "remember something or states a lasting preference. scope 'user' (default): about "
        "this user, shown only when they speak: in any chat when told in their one-to-one "
        "chat, else only in this chat; scope 'chat': about this chat, shared by its "
        "members. Write the fact as one short sentence in the third person. "
        "Facts about people only: instructions to the assistant are refused."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "fact": {"type": "string", "minLength": 1, "maxLength": 2000},
            "scope": {"type": "string", "enum": ["user", "chat"]},
        },
        "required": ["fact"],
        "additionalProperties": False,
    }

    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        memory = ctx.services.memory
        if memory is None:
            raise ToolError("memory is not available in this daemon")
        return await memory.remember(
            ctx.workspace_name,
            ctx.chat_key,
            ctx.user_id,
            str(kwargs["fact"]),
            str(kwargs.get("scope") or "user"),
            private=ctx.direct,
        )
