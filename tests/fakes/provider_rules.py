"""The message-pairing rules a strict provider enforces (OpenAI's and Anthropic's 400s).

One checker, shared by the fake LLM server's strict mode and the governor's property
tests, so "the governed copy is legal" means exactly what the fake server accepts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

ROLES = ("system", "user", "assistant", "tool")


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule, shaped like the ``error`` object of an OpenAI 400."""

    message: str
    param: str
    code: str | None = None

    def body(self) -> dict[str, Any]:
        return {
            "error": {
                "message": self.message,
                "type": "invalid_request_error",
                "param": self.param,
                "code": self.code,
            }
        }


def _call_problem(call: Any, where: str, seen: set[str]) -> Violation | None:
    if not isinstance(call, dict):
        return Violation(f"Invalid type for '{where}': expected an object.", where, "invalid_type")
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        return Violation(f"Missing required parameter: '{where}.id'.", f"{where}.id")
    if call_id in seen:
        return Violation(f"Duplicate tool call id '{call_id}'.", f"{where}.id", "duplicate_id")
    seen.add(call_id)
    if call.get("type") != "function":
        return Violation(f"Invalid value for '{where}.type'.", f"{where}.type", "invalid_value")
    function = call.get("function")
    if not isinstance(function, dict):
        return Violation(f"Missing required parameter: '{where}.function'.", f"{where}.function")
    name = function.get("name")
    if not isinstance(name, str) or not name:
        got = "null" if name is None else type(name).__name__
        return Violation(
            f"Invalid type for '{where}.function.name': expected a string, but got {got} instead.",
            f"{where}.function.name",
            "invalid_type",
        )
    args = function.get("arguments")
    try:
        parsed = json.loads(args) if isinstance(args, str) else None
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        return Violation(
            f"Invalid '{where}.function.arguments': expected a JSON object string.",
            f"{where}.function.arguments",
            "invalid_value",
        )
    return None


def violations(messages: Any) -> list[Violation]:
    """Every rule ``messages`` breaks; an empty list means a strict provider accepts it."""
    if not isinstance(messages, list) or not messages:
        return [Violation("'messages' must be a non-empty array.", "messages")]
    found: list[Violation] = []
    seen: set[str] = set()
    pending: list[str] = []  # calls of the last assistant message still owed a result
    owner = -1
    for i, m in enumerate(messages):
        where = f"messages.[{i}]"
        role = m.get("role") if isinstance(m, dict) else None
        if role not in ROLES:
            found.append(Violation(f"Invalid value for '{where}.role'.", f"{where}.role"))
            continue
        assert isinstance(m, dict)
        if role == "tool":
            call_id = m.get("tool_call_id")
            if call_id not in pending:
                found.append(
                    Violation(
                        "Invalid parameter: messages with role 'tool' must be a response to a "
                        "preceeding message with 'tool_calls'.",
                        f"{where}.role",
                    )
                )
            else:
                pending.remove(call_id)
            if not isinstance(m.get("content"), str):
                found.append(Violation(f"Invalid type for '{where}.content'.", f"{where}.content"))
            continue
        if pending:
            found.append(_unanswered(owner, pending))
        pending, owner = [], i
        if role != "assistant":
            if m.get("content") is None:
                found.append(Violation(f"Missing '{where}.content'.", f"{where}.content"))
            continue
        calls = m.get("tool_calls")
        if calls is None:
            content = m.get("content")
            if not (isinstance(content, str | list) and content):
                found.append(
                    Violation(
                        f"Invalid value for '{where}.content': an assistant message needs "
                        "content or tool_calls.",
                        f"{where}.content",
                    )
                )
            continue
        if not isinstance(calls, list) or not calls:
            found.append(Violation(f"'{where}.tool_calls' must be a non-empty array.", where))
            continue
        for j, call in enumerate(calls):
            problem = _call_problem(call, f"{where}.tool_calls.[{j}]", seen)
            if problem is not None:
                found.append(problem)
            elif isinstance(call, dict):
                pending.append(call["id"])
    if pending:
        found.append(_unanswered(owner, pending))
    return found


def _unanswered(index: int, ids: list[str]) -> Violation:
    return Violation(
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        + ", ".join(ids),
        f"messages.[{index}].role",
    )


def alternation_violations(messages: Any) -> list[Violation]:
    """What a chat template that demands alternating roles refuses (Mistral's, Llama's):
    two user messages in a row, or two assistant messages with no tool result between."""
    found: list[Violation] = []
    previous: Any = None
    for i, m in enumerate(messages if isinstance(messages, list) else []):
        role = m.get("role") if isinstance(m, dict) else None
        if role in ("user", "assistant") and role == previous:
            found.append(
                Violation(
                    "Conversation roles must alternate user/assistant/user/assistant/...",
                    f"messages.[{i}].role",
                )
            )
        previous = role
    return found
