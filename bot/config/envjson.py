"""A ``BOT_`` variable for a list or a table whose value is not JSON, named with how to
write it. pydantic-settings says only which top-level field failed ("error parsing value
for field "llm""), and under ``[llm]`` an innocent ``BOT_LLM__API_BASE`` may sort before
the ``BOT_LLM__FALLBACK_MODELS`` at fault: the one to blame is found by walking each
variable's path through the settings models to a list or table field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import get_origin

from pydantic import BaseModel

_CONTAINERS = (list, set, frozenset, tuple, dict)
_PRIVATE = ("SECRET", "TOKEN", "KEY", "PASSWORD", "ENV", "HEADERS")


def _kind(model: type[BaseModel], path: list[str]) -> str | None:
    """ "list" or "table" when ``path`` (lower-case parts) names such a field of
    ``model``; None for any other field, or a path that names none."""
    for index, part in enumerate(path):
        info = model.model_fields.get(part)
        if info is None:
            return None
        annotation = info.annotation
        is_model = isinstance(annotation, type) and issubclass(annotation, BaseModel)
        if index == len(path) - 1:
            if is_model or get_origin(annotation) is dict or annotation is dict:
                return "table"
            return "list" if get_origin(annotation) in _CONTAINERS else None
        if not is_model:
            return None  # under a dict (MCP servers): pydantic tolerates what is not JSON
        model = annotation  # type: ignore[assignment]
    return None


def _not_json(value: str) -> bool:
    try:
        json.loads(value)
    except ValueError:
        return True
    return False


def env_problem(message: str, model: type[BaseModel], environ: Mapping[str, str]) -> str:
    """pydantic-settings' error ``message`` as the variable to fix and how to write it."""
    field = message.split('"')[1] if message.count('"') >= 2 else ""
    prefix = f"BOT_{field.upper()}"
    names = sorted(n for n in environ if n.upper() == prefix or n.upper().startswith(prefix + "__"))
    for name in names:
        kind = _kind(model, name.upper().removeprefix("BOT_").lower().split("__"))
        if kind and _not_json(environ[name]):
            return _how(name, kind, environ[name])
    return f"environment variable {names[0] if names else prefix}: not valid JSON"


def _how(name: str, kind: str, value: str) -> str:
    """The line for ``name``: a list is shown with the operator's own items (unless
    private or already bracketed), a table as a JSON object."""
    if kind == "table":
        example = '{"key": "value"}'
    else:
        private = any(word in name.upper() for word in _PRIVATE)
        item = "..." if private or any(c in value for c in "\"'[]{}") else value
        example = "[" + ", ".join(f'"{part.strip()}"' for part in item.split(",")) + "]"
    return f"environment variable {name}: not valid JSON; a {kind} is written as {name}='{example}'"
