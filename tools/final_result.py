"""The output contract: the model finishes every task by calling ``final_result``.

Declaring the final answer as a tool reuses the function-calling path, so the reply is
schema-validated like any other call: ``answer`` goes to the user, ``structured_data`` to
the program, ``next_actions`` to orchestration. The runner reads the validated payload
from ``ToolResult.arguments``; this tool only acknowledges it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from bot.agent.toolbox import FINAL_RESULT, ToolContext
from tools.base import Tool


class FinalResultTool(Tool):
    """Carries the final answer; it has no side effects, and its result is never offloaded."""

    name = FINAL_RESULT
    description = (
        "Deliver the final result. You MUST call this tool exactly once to finish every task, "
        "after any other tool calls are done. `answer` is the natural-language reply shown to "
        "the user: concise and friendly, in the user's language. `structured_data` holds "
        "machine-readable results for the program (for example a created reminder), or null. "
        "`next_actions` lists suggested follow-up actions, possibly empty."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "answer": {
                "type": "string",
                "minLength": 1,
                "description": "The final natural-language reply to the user.",
            },
            "structured_data": {
                "type": ["object", "null"],
                "description": "Optional business data such as reminder or order details.",
            },
            "next_actions": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Suggested follow-up actions.",
            },
        },
        "required": ["answer"],
        "additionalProperties": False,
    }
    read_only = True
    offload_exempt = True

    async def execute(self, ctx: ToolContext, **kwargs: Any) -> str:
        return "Answer delivered to the user."
