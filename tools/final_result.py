"""The output contract: the model finishes every task by calling ``final_result``.

Declaring the final answer as a tool reuses the function-calling path, so the reply is
schema-validated like any other call: ``answer`` goes to the user, ``structured_data`` to
the program, ``next_actions`` to orchestration. The runner reads the validated payload
from ``ToolResult.arguments``; this tool only acknowledges it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from bot.agent.toolbox import FINAL_RESULT, FINAL_RESULT_ACK, ToolContext
from bot.text import shows_nothing
from tools.base import Tool

BLANK = "parameter 'answer': it is blank; write the reply the user will read"


class FinalResultTool(Tool):
    """Carries the final answer; it has no side effects, and its result is never offloaded."""

    name = FINAL_RESULT
    description = (
        "Deliver your reply. You MUST call this exactly once to finish every task, after "
        "any other tool calls are done."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "answer": {
                "type": "string",
                "minLength": 1,
                "description": "The reply shown to the user: concise, friendly, in their language.",
            },
            "structured_data": {
                "type": ["object", "null"],
                "description": "Machine-readable results (e.g. a created reminder).",
            },
            "next_actions": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Suggested follow-up actions, possibly empty.",
            },
        },
        "required": ["answer"],
        "additionalProperties": False,
    }
    read_only = True
    offload_exempt = True

    def validate_params(self, params: Mapping[str, Any]) -> list[str]:
        """The schema's checks, and an answer with something to read: spaces, line
        breaks and zero-width characters pass ``minLength`` but show the user nothing (a
        platform drops an empty message), so the model is asked again."""
        problems = super().validate_params(params)
        answer = params.get("answer")
        if isinstance(answer, str) and answer and shows_nothing(answer):
            problems.append(BLANK)
        return problems

    async def execute(self, ctx: ToolContext, **kwargs: Any) -> str:
        return FINAL_RESULT_ACK
