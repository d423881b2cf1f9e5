"""The config ``bot init`` writes: every key documented, few of them set.

A key written live pins its value: after an upgrade the file keeps the old default, which
its operator never chose. So only what a user must set is live (the admins, the model,
its server and key, each platform's credentials); every other key is shown commented out
with its default (``# max_steps = 8   # ...``), so the defaults of a later version apply.
``bot init --set`` and its questions turn such a line live (``bot.cli.toml_edit``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from pydantic import BaseModel, SecretStr

# Besides each platform's credentials (the SecretStr keys of [channels.<name>]).
MUST_SET = ("admins", "llm.model", "llm.api_base", "llm.api_key")

_HEADER = re.compile(r"^\[([^\]]+)\]")
_KEY = re.compile(r"^([A-Za-z0-9_-]+)\s*=")
# The padding before a line's comment loses what "# " adds, so the comments stay aligned.
_PADDING = re.compile(r"  (?= +# )")


def key_paths(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    """The dotted path of every key of ``model`` (deprecated ones left out)."""
    for name, info in model.model_fields.items():
        if name in getattr(model, "DEPRECATED", {}):
            continue
        sub = info.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            yield from key_paths(sub, f"{prefix}{name}.")
        else:
            yield prefix + name


def must_set(model: type[BaseModel]) -> frozenset[str]:
    """The keys written live: :data:`MUST_SET` and the platforms' credentials."""
    channels = model.model_fields["channels"].annotation
    assert isinstance(channels, type) and issubclass(channels, BaseModel)
    credentials = {
        f"channels.{name}.{key}"
        for name, info in channels.model_fields.items()
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel)
        for key, field in info.annotation.model_fields.items()
        if field.annotation is SecretStr
    }
    return frozenset(MUST_SET) | credentials


def unpinned(text: str, model: type[BaseModel]) -> str:
    """The example ``text`` with each key of ``model`` that is not :func:`must_set`
    commented out; other lines (headers, comments, ``[workspaces.routes]``'s entries,
    which are the user's routing, not a default) as they are."""
    keys, live = set(key_paths(model)), must_set(model)

    def edit(path: str, line: str) -> str:
        pinned = path in keys - live and not line.startswith("#")
        return "# " + _PADDING.sub("", line, count=1) if pinned else line

    return _by_key(text, edit)


def defaults_shown(text: str, model: type[BaseModel]) -> str:
    """``text`` with each default :func:`unpinned` commented out made live again: every
    key the example documents, at the value it shows (what tests hold to the settings)."""
    keys = set(key_paths(model))

    def edit(path: str, line: str) -> str:
        return line.removeprefix("# ") if path in keys else line

    return _by_key(text, edit)


def _by_key(text: str, edit: Callable[[str, str], str]) -> str:
    """``text`` with each key line, live or commented out (``# key = ...``), given to
    ``edit`` with its dotted path under the live table headers."""
    section, out = "", []
    for line in text.splitlines():
        header, key = _HEADER.match(line), _KEY.match(line.removeprefix("# "))
        if header:
            section = header.group(1).strip() + "."
        out.append(edit(section + key.group(1), line) if key and not header else line)
    return "\n".join(out) + "\n"
