"""A refused config as one line per problem, each naming its key and, for a misspelled
one, the key it likely meant (``[llm] modle``: did you mean 'llm.model'?; ``admin = [...]``
over the ``[admin]`` table: did you mean 'admins'?). A key only a ``BOT_`` variable set is
said as that variable (``BOT_LLM__MODLE``: did you mean ``BOT_LLM__MODEL``?), not as a key
of the file, which has none such.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import BaseModel, SecretStr, ValidationError

from bot.ops.redaction import masked_url

_SECRET_WORDS = ("secret", "token", "key", "password")


def describe_problems(
    exc: ValidationError,
    model: type[BaseModel],
    data: Mapping[str, Any],
    environ: Mapping[str, str],
    config_path: Path,
) -> str:
    """Every problem, one line each: only the first was named ("and 1 more problem"), so
    a config took one start per mistake to correct. A key a union refuses once per member
    is said once."""
    seen: set[tuple[Any, ...]] = set()
    lines = []
    for error in exc.errors():
        if error["loc"] not in seen:
            seen.add(error["loc"])
            lines.append(_line(error, model, data, environ, config_path))
    return "\n".join(lines)


def _line(
    error: Any,
    model: type[BaseModel],
    data: Mapping[str, Any],
    environ: Mapping[str, str],
    config_path: Path,
) -> str:
    parts = [str(part) for part in error["loc"]]
    loc = ".".join(parts)
    env_name = _variable(parts, environ)
    kind = error["type"]
    if kind == "extra_forbidden":
        close = _close(model, parts)
        if env_name and not _in_file(data, parts):
            hint = f"; did you mean BOT_{'__'.join(close).upper()}?" if close else ""
            return f"environment variable {env_name}: no setting '{loc}'{hint}"
        hint = f"; did you mean '{'.'.join(close)}'?" if close else ""
        return f"config {config_path}: unknown key '{loc}'{hint}"
    msg = str(error["msg"]).removeprefix("Value error, ")
    if not loc:  # a check across sections names its keys itself
        return f"config {config_path}: {msg}"
    value = error.get("input")
    origin = f" from {env_name}" if env_name else ""
    if kind == "model_type" and not isinstance(value, Mapping):
        close = _close(model, parts, values_only=True)
        hint = f"; did you mean '{'.'.join(close)}'?" if close else ""
        return f"config {config_path}: key '{loc}'{origin} is a table ([{loc}]), not a value{hint}"
    return f"config {config_path}: key '{loc}'{origin}: {msg}{_shown(value, model, parts)}"


def _shown(value: Any, model: type[BaseModel], parts: Sequence[str]) -> str:
    """`` (got <value>)``, never with a secret in it: none for a key named as a secret
    (llm.api_key, *.token, *.signing_secret, MCP servers' env and headers); for a value
    of a secret type (``store.url``), only a URL's masked form (``mysql://bot:***@db/x``:
    the mistyped scheme is what the operator needs to see); and any URL's password and
    secret query values masked."""
    loc = ".".join(parts)
    if isinstance(value, dict) or any(word in loc for word in _SECRET_WORDS):
        return ""
    if any(part in ("env", "headers") for part in parts):
        return ""
    if isinstance(value, str):
        if _secret_typed(model, parts) and "://" not in value:
            return ""
        return f" (got {masked_url(value)!r})"
    return "" if _secret_typed(model, parts) else f" (got {value!r})"


def _secret_typed(model: type[BaseModel], parts: Sequence[str]) -> bool:
    """Whether the key at ``parts`` holds a ``SecretStr`` (or several, or maybe one)."""
    parent = _model_at(model, parts[:-1])
    info = parent.model_fields.get(parts[-1]) if parent else None
    pending = [info.annotation] if info else []
    while pending:
        annotation = pending.pop()
        if annotation is SecretStr:
            return True
        pending += get_args(annotation)
    return False


def _variable(parts: Sequence[str], environ: Mapping[str, str]) -> str | None:
    """The ``BOT_`` variable (any case, as pydantic-settings reads them) that sets ``parts``."""
    wanted = "BOT_" + "__".join(parts).upper()
    return next((name for name in environ if name.upper() == wanted), None)


def _in_file(data: Mapping[str, Any], parts: Sequence[str]) -> bool:
    node: Any = data
    for part in parts:
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _model_at(model: type[BaseModel], parts: Sequence[str]) -> type[BaseModel] | None:
    """The model holding the key at ``parts`` (a table's section; through a table of
    named entries, ``[mcp.servers.<name>]``, to the entries' model), or None."""
    rest = iter(parts)
    for part in rest:
        info = model.model_fields.get(part)
        annotation = info.annotation if info else None
        if get_origin(annotation) is dict:
            annotation = get_args(annotation)[1]
            next(rest, None)  # the entry's name
        if not _is_model(annotation):
            return None
        model = annotation  # type: ignore[assignment]
    return model


def _close(
    model: type[BaseModel], parts: Sequence[str], *, values_only: bool = False
) -> list[str] | None:
    """The path ``parts`` likely meant: a section's name run into its key with one
    underscore (``<section>_token``: ``<section>``, ``token``), else the closest sibling
    (``values_only``: of those that are no table), or None."""
    import difflib  # only for a mistake

    parent = _model_at(model, parts[:-1])
    if parent is None:
        return None
    name, fields = parts[-1], parent.model_fields
    for field in sorted(fields, key=len, reverse=True):
        sub = fields[field].annotation
        key = name.removeprefix(field + "_")
        if key != name and _is_model(sub) and key in sub.model_fields:  # type: ignore[union-attr]
            return [*parts[:-1], field, key]
    known = [
        f for f in fields if f != name and not (values_only and _is_model(fields[f].annotation))
    ]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return [*parts[:-1], close[0]] if close else None
