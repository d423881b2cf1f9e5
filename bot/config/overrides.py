"""A key the config file sets that a ``BOT_`` variable overrides with another value is said
at load (so at start and in ``bot doctor``): the image's ``BOT_DATA_DIR=/data`` and
``BOT_WEB__PORT=8765`` beat the ``data_dir`` and ``[web] port`` of a mounted bot.toml, and
the log named only the value in force, as if the file had never said otherwise. A value
the environment sets again unchanged is not said, nor an empty one it fills in (the
example's ``token = ""``, its secret in bot.env); a secret's values are never shown.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr

from bot.config.envnames import setting_path
from bot.config.former_defaults import same, value_at


def overridden(
    settings: BaseModel, data: Mapping[str, Any], environ: Mapping[str, str], file_name: str
) -> list[str]:
    """One line per key the parsed file ``data`` sets that a variable of ``environ``
    overrides with another value in ``settings``."""
    lines = []
    for name, raw in sorted(environ.items()):
        path = setting_path(name)
        if not raw or path is None:  # an empty variable sets nothing (env_ignore_empty)
            continue
        key = path.lower().replace("__", ".")
        found, in_file = value_at(data, key)
        if not found:
            continue
        for where, file_value, in_force in _differences(key, in_file, value_at(settings, key)[1]):
            if isinstance(in_force, SecretStr):
                lines.append(
                    f"{where} in {file_name} is overridden by {name} from the environment"
                    " (a secret: values not shown)"
                )
                continue
            setter = f"{name}={raw}" if where == key else f"{name} ({where} = {_shown(in_force)})"
            lines.append(
                f"{where} = {_shown(file_value)} in {file_name} is overridden by {setter}"
                " from the environment"
            )
    return lines


def _differences(key: str, in_file: object, in_force: object) -> Iterator[tuple[str, Any, Any]]:
    """``(key, file's value, value in force)`` of each key under ``key`` that differ."""
    if isinstance(in_file, Mapping):
        for sub, value in in_file.items():
            found, force = value_at(in_force, sub)
            if found:
                yield from _differences(f"{key}.{sub}", value, force)
        return
    blank = in_file in ("", [])  # the example's placeholders: filled in, not beaten
    if not blank and not _equal(in_file, in_force):
        yield key, in_file, in_force


def _equal(in_file: object, in_force: object) -> bool:
    if isinstance(in_force, SecretStr):
        in_force = in_force.get_secret_value()
    elif isinstance(in_force, Path) and isinstance(in_file, str):
        in_file = Path(in_file)
    return same(in_file, in_force)


def _shown(value: object) -> str:
    """As the file writes it: quoted text, a number, a list."""
    if isinstance(value, Path):
        value = str(value)
    return json.dumps(value, ensure_ascii=False, default=str)
