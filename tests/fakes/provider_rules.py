"""The message-pairing rules a strict provider enforces (OpenAI's and Anthropic's 400s).

One checker, shared by the fake LLM server's strict mode and the governor's property
tests, so "the governed copy is legal" means exactly what the fake server accepts.
"""

from __future__ import annotations

import json
import re
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


# -- tool schemas ----------------------------------------------------------------------
# The subset of JSON Schema that OpenAI (function parameters), Anthropic (input_schema)
# and Gemini (function declarations, an OpenAPI subset) all accept; each rule below is
# one a real provider enforces with a 400.
SCHEMA_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object"})
SCHEMA_KEYS = frozenset(
    {
        "type",
        "description",
        "properties",
        "required",
        "items",
        "enum",
        "anyOf",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
    }
)


def schema_violations(schema: Any, where: str = "parameters") -> list[Violation]:
    """Every rule a tool's parameters schema breaks for at least one strict provider."""
    found: list[Violation] = []
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return [Violation(f"Invalid schema for function: '{where}' must be type 'object'.", where)]
    _schema_node(schema, where, found, 0)
    return found


def _schema_node(node: Any, where: str, found: list[Violation], depth: int) -> None:
    def bad(message: str) -> None:
        found.append(Violation(f"Invalid schema at '{where}': {message}", where, "invalid_schema"))

    if depth > 32 or not isinstance(node, dict):
        bad("a schema must be an object")
        return
    unknown = sorted(set(node) - SCHEMA_KEYS)
    if unknown:
        bad(f"unsupported keyword(s) {', '.join(unknown)}")
    if "anyOf" in node:
        branches = node["anyOf"]
        if "type" in node or not isinstance(branches, list) or len(branches) < 2:
            bad("anyOf must be a list of at least two schemas and stand without 'type'")
            return
        for i, branch in enumerate(branches):
            _schema_node(branch, f"{where}.anyOf[{i}]", found, depth + 1)
        return
    kind = node.get("type")
    if not isinstance(kind, str) or kind not in SCHEMA_TYPES:
        bad(f"'type' must be one of {sorted(SCHEMA_TYPES)}, got {kind!r}")
        return
    if kind == "object":
        props = node.get("properties")
        if not isinstance(props, dict):
            bad("object schema missing properties")
            return
        required = node.get("required", [])
        if not isinstance(required, list) or any(r not in props for r in required):
            bad("'required' must name declared properties")
        for name, sub in props.items():
            _schema_node(sub, f"{where}.properties.{name}", found, depth + 1)
    elif kind == "array":
        if "items" not in node:
            bad("array schema missing items")
        else:
            _schema_node(node["items"], f"{where}.items", found, depth + 1)
    if "enum" in node and not (
        kind == "string"
        and isinstance(node["enum"], list)
        and node["enum"]
        and all(isinstance(v, str) for v in node["enum"])
    ):
        bad("enum is only allowed as a non-empty list of strings on type 'string'")


def tool_violations(tools: Any) -> list[Violation]:
    """Every rule the request's ``tools`` break (names and parameter schemas)."""
    if tools is None:
        return []
    if not isinstance(tools, list):
        return [Violation("'tools' must be an array.", "tools")]
    found: list[Violation] = []
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        where = f"tools[{i}].function"
        if not isinstance(function, dict):
            found.append(Violation(f"Missing required parameter: '{where}'.", where))
            continue
        name = function.get("name")
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name):
            found.append(Violation(f"Invalid '{where}.name': {name!r}.", f"{where}.name"))
        found += schema_violations(function.get("parameters"), f"{where}.parameters")
    return found


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
