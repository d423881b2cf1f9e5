"""Values a config may hold only because an earlier ``bot init`` wrote that day's default.

``bot init`` once wrote every key with its value, so after an upgrade such a file pins the
defaults of its day (``agent.max_concurrent_chats = 64`` where the default is now 1024):
values its operator never chose. A key set in the file to one of its former defaults
listed here is named at load and in ``bot doctor``, with the default it has now. Only
former defaults are named: any other value, or the current default, is the operator's.

Add a line here whenever a default changes (tests/bot/test_former_defaults.py checks that
each entry's current default differs, and that each names a real key).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, SecretStr


@dataclass(frozen=True, slots=True)
class Former:
    """The values ``bot init`` wrote for a key before its default changed, and what
    the current default means where its number alone does not say."""

    values: tuple[object, ...]
    meaning: str = ""


FORMER_DEFAULTS: Mapping[str, Former] = {
    # 64 until the model calls got their own cap (1024: one per chat run at once).
    "agent.max_concurrent_chats": Former((64,)),
    # 256 until the cap was chosen by provider.
    "llm.max_concurrent_calls": Former(
        (256,), "by provider: 500 for a hosted API, 4 for a model server on one machine"
    ),
    # 3 until a full channel pushed out its oldest code instead of refusing newcomers.
    "access.max_pending": Former((3,)),
}


def current_default(model: type[BaseModel], path: str) -> object:
    """The default of the key at dotted ``path`` under ``model`` (KeyError: no such key)."""
    *sections, key = path.split(".")
    for name in sections:
        sub = model.model_fields[name].annotation
        if not (isinstance(sub, type) and issubclass(sub, BaseModel)):
            raise KeyError(path)
        model = sub
    default = model.model_fields[key].get_default(call_default_factory=True)
    return default.get_secret_value() if isinstance(default, SecretStr) else default


def value_at(node: Any, path: str) -> tuple[bool, object]:
    """Whether the dotted ``path`` is in ``node`` (a parsed file, a model), and its value."""
    for part in path.split("."):
        if isinstance(node, Mapping):
            if part not in node:
                return False, None
            node = node[part]
        elif isinstance(node, BaseModel) and hasattr(node, part):
            node = getattr(node, part)
        else:
            return False, None
    return True, node


def same(a: object, b: object) -> bool:
    """Equal as config values: 64 and 64.0 are, True and 1 are not."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def former_defaults_in_use(settings: BaseModel, data: Mapping[str, Any]) -> list[str]:
    """One line per key the parsed file ``data`` sets to a former default that is also
    the value in force (one the environment overrides pins nothing)."""
    lines = []
    for path, former in FORMER_DEFAULTS.items():
        found, value = value_at(data, path)
        in_force = value_at(settings, path)[1]
        if not found or not any(same(value, v) for v in former.values):
            continue
        if not same(in_force, value):
            continue
        now = current_default(type(settings), path)
        meaning = f" ({former.meaning})" if former.meaning else ""
        lines.append(
            f"'{path} = {value!r}' is an earlier version's default; the default is now "
            f"{now!r}{meaning}: delete the line to follow the default, or keep it to pin "
            f"{value!r}"
        )
    return lines
