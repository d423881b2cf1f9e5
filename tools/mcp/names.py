"""The names the model sees: ``mcp_<server>_<tool>`` in ``[A-Za-z0-9_-]``, at most 64.

Providers refuse other characters and longer names. A name that had to be cut (or
that collides with another after cleaning) ends in a hash of the original, so two
long tool names that share a prefix stay two tools.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Container

MAX_NAME = 64
_HASH_LEN = 8
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def _hashed(raw: str, cleaned: str) -> str:
    digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()[:_HASH_LEN]
    return f"{cleaned[: MAX_NAME - _HASH_LEN - 1]}_{digest}"


def tool_name(server: str, tool: str, taken: Container[str] = ()) -> str:
    """The model-facing name of ``tool`` on ``server``; never one already in ``taken``."""
    raw = f"mcp_{server}_{tool}"
    cleaned = _UNSAFE.sub("_", raw)
    if len(cleaned) <= MAX_NAME and cleaned not in taken:
        return cleaned
    return _hashed(raw, cleaned)
