"""Keys a config may still hold that no longer do anything: accepted, and said at load.

A config file written by an earlier ``bot init`` must keep loading after an upgrade, so a
key that goes stays a field of its section (its value validated, then ignored) and is
listed in the section's ``DEPRECATED`` (key -> what to do instead). ``bot init`` no longer
writes it; where a file or a ``BOT_`` variable still sets it, the operator hears once at
start-up what replaced it, instead of a setting that silently stopped working.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel


def deprecated_paths(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, str]]:
    """``(dotted path, what to do instead)`` of every deprecated key under ``model``."""
    notes: Mapping[str, str] = getattr(model, "DEPRECATED", {})
    for key, note in notes.items():
        yield prefix + key, note
    for name, info in model.model_fields.items():
        sub = info.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            yield from deprecated_paths(sub, f"{prefix}{name}.")


def _in_file(data: Mapping[str, Any], path: str) -> bool:
    node: Any = data
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def deprecated_in_use(
    model: type[BaseModel], data: Mapping[str, Any], environ: Mapping[str, str]
) -> list[str]:
    """One line per deprecated key the parsed file ``data`` or the environment sets."""
    found = []
    for path, note in deprecated_paths(model):
        env_name = "BOT_" + path.replace(".", "__").upper()
        where = [f"'{path}'"] if _in_file(data, path) else []
        where += [env_name] if any(n.upper() == env_name for n in environ) else []
        if where:
            found.append(f"{' and '.join(where)}: deprecated and ignored; {note}")
    return found
