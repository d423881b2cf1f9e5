"""A ``tools/call`` result, read leniently from its raw JSON, as text for the model.

Text parts are joined; images, audio and binary resources are described (kind, MIME
type, size), never dumped as base64 into the context, and their bytes are handed back
(``CallOutcome.files``) to be forwarded to the user as attachments; embedded text resources are
inlined; structured content is shown as JSON when there is no text. Anything the
result holds that is not understood is described by its type, so an odd server
never turns a call into an exception. The text is cut at ``max_chars`` while it is
built (saying so), so a server that answers with megabytes costs the turn no more than
that, whether the result is then kept in the history or offloaded.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

NO_OUTPUT = "(no output)"


MAX_FILES = 10  # files one result may forward
MAX_FILE_BYTES = 50_000_000  # each, decoded


@dataclass(frozen=True, slots=True)
class ResultFile:
    """An image, audio clip or binary resource a tool returned: forwarded to the user."""

    kind: str  # image, audio, resource
    mime: str
    data: bytes


@dataclass(frozen=True, slots=True)
class CallOutcome:
    text: str
    is_error: bool
    files: tuple[ResultFile, ...] = ()


def render_result(raw: Any, max_chars: int = 100_000) -> CallOutcome:
    """The model's view of a raw ``CallToolResult``, at most ``max_chars`` of it."""
    if not isinstance(raw, Mapping):
        return CallOutcome(f"(the server returned a non-object result: {_short(raw)})", True)
    parts = raw.get("content")
    texts: list[str] = []
    size = 0
    for part in parts if isinstance(parts, list) else []:
        text = _part(part)
        if text:
            texts.append(text)
            size += len(text) + 1
        if size > max_chars:
            break  # the rest would be cut anyway: not even rendered
    structured = raw.get("structuredContent")
    if not texts and structured is not None:
        texts = [json.dumps(structured, ensure_ascii=False, default=str)]
    text = "\n".join(texts) or NO_OUTPUT
    files = tuple(f for f in map(_file, parts if isinstance(parts, list) else []) if f)
    return CallOutcome(_capped(text, max_chars), raw.get("isError") is True, files[:MAX_FILES])


def _file(part: Any) -> ResultFile | None:
    """The bytes of an image, audio or blob part, when they decode and are not too big."""
    if not isinstance(part, Mapping):
        return None
    kind, holder, key = part.get("type"), part, "data"
    if kind == "resource" and isinstance(part.get("resource"), Mapping):
        holder, key = part["resource"], "blob"
    elif kind not in ("image", "audio"):
        return None
    data = holder.get(key)
    if not isinstance(data, str) or len(data) > MAX_FILE_BYTES * 4 // 3 + 4:
        return None
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    mime = holder.get("mimeType")
    return ResultFile(str(kind), mime if isinstance(mime, str) else "", raw)


def _capped(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    note = f"\n[result cut at {max_chars:,} characters (mcp.max_result_chars)]"
    return text[: max_chars - len(note)] + note


def _part(part: Any) -> str:
    if not isinstance(part, Mapping):
        return f"[unreadable content part: {_short(part)}]"
    kind = part.get("type")
    if kind == "text":
        text = part.get("text")
        return text if isinstance(text, str) else ""
    if kind in ("image", "audio"):
        return f"[{kind}: {part.get('mimeType', 'unknown type')}, {_size(part.get('data'))}]"
    if kind == "resource_link":
        name = part.get("name") or part.get("uri")
        mime = part.get("mimeType", "unknown type")
        return f"[resource link: {name} ({part.get('uri')}, {mime})]"
    if kind == "resource":
        return _resource(part.get("resource"))
    return f"[{kind or 'unknown'} content omitted]"


def _resource(resource: Any) -> str:
    if not isinstance(resource, Mapping):
        return "[embedded resource omitted]"
    uri = resource.get("uri", "")
    if isinstance(resource.get("text"), str):
        return f"[resource {uri}]\n{resource['text']}"
    mime = resource.get("mimeType", "unknown type")
    return f"[embedded resource {uri}: {mime}, {_size(resource.get('blob'))}]"


def _size(data: Any) -> str:
    if not isinstance(data, str):
        return "no data"
    try:
        return f"{len(base64.b64decode(data, validate=False))} bytes"
    except (binascii.Error, ValueError):
        return f"{len(data)} characters of data"


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
