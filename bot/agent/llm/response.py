"""What a model answered: :class:`LLMResponse`, parsed from litellm's reply object.

Kept apart from the client so the parsing of provider replies (pydantic objects or
dicts, missing fields, tool calls without ids) is one small, testable unit, and so
:mod:`bot.agent.llm.errors` can name an empty reply without importing the client.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from bot.agent.toolbox import ToolCall


@dataclass(frozen=True, slots=True)
class LLMResponse:
    """One model answer; ``model`` is the configured model string that produced it."""

    content: str | None
    tool_calls: tuple[ToolCall, ...]
    model: str
    finish_reason: str | None
    usage: Mapping[str, int] = field(default_factory=dict)


class ChatModel(Protocol):
    """What a turn needs of a model (the litellm client, or a test's fake)."""

    async def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> LLMResponse: ...


AnswerReader = Callable[[], str]
"""The answer text written so far by the model call being streamed (parsed when called)."""


class AnswerSink(Protocol):
    """Who watches a turn's answer grow (the streaming preview of one chat)."""

    def answer_grew(self, read: AnswerReader) -> None:
        """The ``final_result`` answer of the current model call grew; ``read()`` gives
        its text. A new call's reader replaces the last (a retry rewrites what shows)."""
        ...

    def tools_running(self, names: tuple[str, ...]) -> None:
        """The model called these tools (not ``final_result``); they run now."""
        ...


@runtime_checkable
class StreamingModel(Protocol):
    """A model that can stream its answer (litellm ``stream=True``); a test's fake
    model need not, and a turn without a preview never asks for it."""

    async def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, sink: AnswerSink
    ) -> LLMResponse: ...


class EmptyResponse(Exception):
    """The provider answered 200 with no choices; worth another try."""


# The finish reason of a streamed answer read only up to its bounds (StreamBounds): its
# text ends with a note saying so, and the turn ends with it.
CUT_SHORT = "cut_short"


class StreamOverrun(Exception):
    """A streamed answer ran past its bounds with no answer text to end the turn with
    (a call's arguments that never end): another try would run on the same way."""


class StreamCut(Exception):
    """The provider's connection broke after its streamed answer had begun: it was
    reachable and answering, so no setting is to blame; worth another try."""


def get_field(obj: Any, key: str) -> Any:
    """Read a field from a pydantic-ish object or a dict, None when absent."""
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def _parse_tool_call(raw: Any) -> ToolCall:
    function = get_field(raw, "function")
    name = get_field(function, "name") if function is not None else None
    call_id = get_field(raw, "id")
    return ToolCall(
        id=call_id if isinstance(call_id, str) and call_id else f"call_{uuid.uuid4().hex[:24]}",
        name=name if isinstance(name, str) and name else None,
        arguments=get_field(function, "arguments") if function is not None else None,
    )


def parse_usage(raw: Any) -> dict[str, int]:
    usage: dict[str, int] = {}
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        value = get_field(raw, key) if raw is not None else None
        if isinstance(value, int) and not isinstance(value, bool):
            usage[key] = value
    return usage


def parse_response(resp: Any, model: str) -> LLMResponse:
    """The first choice of a completion; raises :class:`EmptyResponse` when there is none."""
    choices = get_field(resp, "choices")
    if not choices:
        raise EmptyResponse("the provider returned no choices")
    choice = choices[0]
    message = get_field(choice, "message")
    content = get_field(message, "content") if message is not None else None
    raw_calls = (get_field(message, "tool_calls") if message is not None else None) or ()
    finish = get_field(choice, "finish_reason")
    return LLMResponse(
        content=content if isinstance(content, str) or content is None else str(content),
        tool_calls=tuple(_parse_tool_call(c) for c in raw_calls),
        model=model,
        finish_reason=finish if isinstance(finish, str) else None,
        usage=parse_usage(get_field(resp, "usage")),
    )
