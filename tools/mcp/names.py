"""The names the model sees: ``mcp_<server>_<tool>`` in ``[A-Za-z0-9_-]``, at most 64.

Providers refuse other characters and longer names. A name that had to be cut ends in a
hash of the original, so two long tool names that share a prefix stay two tools.

Two tools can also clean to one name: ``a.b`` and ``a_b`` on one server, or tool
``b_c`` of server ``a`` and tool ``c`` of server ``a_b``. Who keeps the plain name is
decided by the names alone, never by which server connected or listed first, so a name
in a chat's history or a skill means the same tool after every restart and reconnect:

- ``mcp_<x>_...`` belongs to the configured server with the longest name ``x`` it
  starts with; a tool of server ``a`` that would read as server ``a_b``'s is hashed;
- on one server, a tool whose name needed no cleaning keeps it; tools that clean to
  the same name are all hashed;
- a name a built-in or plugin tool has is hashed.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Collection, Container, Iterable

MAX_NAME = 64
_HASH_LEN = 8
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def _hashed(raw: str, cleaned: str) -> str:
    digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()[:_HASH_LEN]
    return f"{cleaned[: MAX_NAME - _HASH_LEN - 1]}_{digest}"


def _owner(cleaned: str, servers: Iterable[str]) -> str:
    """The configured server a plain ``mcp_<server>_<tool>`` name reads as."""
    owners = [s for s in servers if cleaned.startswith(f"mcp_{s}_")]
    return max(owners, key=len, default="")


def tool_names(
    server: str, tools: Iterable[str], servers: Collection[str], reserved: Container[str] = ()
) -> dict[str, str]:
    """Each of ``server``'s listed ``tools`` -> its model-facing name (see the module).

    ``servers`` are every configured server's name; ``reserved`` the names of tools
    that are not MCP tools."""
    raw = {tool: f"mcp_{server}_{tool}" for tool in tools}
    cleaned = {tool: _UNSAFE.sub("_", name) for tool, name in raw.items()}
    uses = Counter(cleaned.values())
    owners = {*servers, server}
    names = {}
    for tool, name in cleaned.items():
        plain = (
            len(name) <= MAX_NAME
            and (name == raw[tool] or uses[name] == 1)
            and name not in reserved
            and _owner(name, owners) == server
        )
        names[tool] = name if plain else _hashed(raw[tool], name)
    return names
