"""A key set in ``bot init``'s commented example, as TOML: the value parsed as TOML
(``9000``, ``true``, ``["42"]``; anything else is text), key parts quoted where TOML needs
it (``"chat:1"``), the line's comment kept, a default commented out there made live in its
place. Text edits, not a TOML writer, because a writer would drop the comments that
document every key.
"""

from __future__ import annotations

import json
import re
import tomllib
from datetime import date, datetime, time

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_HEADER = re.compile(r"^\[([^\]]+)\]")


def parse_value(text: str) -> object:
    """``--set``'s value as TOML, else the text itself (``--set llm.model=openai/x``)."""
    try:
        parsed = tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError:
        return text
    return parsed["v"] if parsed.keys() == {"v"} else text  # "1\nw = 2" is text


def toml_key(part: str) -> str:
    """One part of a key or table name: bare when TOML allows, else a quoted string."""
    return part if _BARE.fullmatch(part) else _string(part)


def toml_value(value: object) -> str:
    """``value`` (what :mod:`tomllib` returns) written as TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)  # inf and nan are TOML's spelling too
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        pairs = ", ".join(f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items())
        return "{ " + pairs + " }" if pairs else "{}"
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    raise TypeError(f"no TOML form for {type(value).__name__}")


def _string(text: str) -> str:
    # JSON's escapes are TOML's; non-ASCII is kept (a \u escape of half a surrogate pair is
    # not TOML), and DEL, which JSON leaves alone, is escaped.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def set_key(text: str, section: str, key: str, value: object) -> str:
    """``text`` (TOML) with ``key`` of ``[section]`` ("" for the top) set to ``value``,
    the line's comment kept: its live line replaced, else its commented-out default
    (``# key = default``) made live in place, else added under the header."""
    header = ".".join(toml_key(part) for part in section.split(".")) if section else ""
    name, written = toml_key(key), toml_value(value)
    lines = text.splitlines()
    current, header_at = "", -1 if section else 0
    commented: tuple[int, re.Match[str]] | None = None
    pattern = re.compile(rf"^(# )?{re.escape(name)}(\s*=\s*)(?:\"[^\"]*\"|\[[^\]]*\]|\S+)(.*)$")
    for n, line in enumerate(lines):
        found = _HEADER.match(line)
        if found:
            current = found.group(1).strip()
            header_at = n if current == header else header_at
            continue
        hit = pattern.match(line) if current == header else None
        if hit and not hit.group(1):
            lines[n] = f"{name}{hit.group(2)}{written}{hit.group(3)}"
            return "\n".join(lines) + "\n"
        if hit and commented is None:
            commented = n, hit
    if commented is not None:
        n, hit = commented
        lines[n] = _made_live(hit.group(0), hit.group(3), f"{name}{hit.group(2)}{written}")
        return "\n".join(lines) + "\n"
    if header_at < 0:
        return f"{text.rstrip()}\n\n[{header}]\n{name} = {written}\n"
    lines.insert(header_at + (1 if section else 0), f"{name} = {written}")
    return "\n".join(lines) + "\n"


def _made_live(line: str, rest: str, assignment: str) -> str:
    """A commented-out ``# key = default   # comment`` (``rest``: what follows the
    default) as ``assignment``, its comment kept in its column where the value leaves room."""
    comment = rest.lstrip()
    if not comment:
        return assignment
    column = len(line) - len(comment)
    return f"{assignment}{' ' * max(2, column - len(assignment))}{comment}"
