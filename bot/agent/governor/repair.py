"""The repair steps of the context governor: make a stored history legal for a provider.

Stored history may hold anything an older release or a crash left behind: empty
assistant placeholders, tool calls with no name or junk arguments, tool results whose
call is gone, calls whose result never arrived. Replayed as is, one such message gets
every later request rejected (HTTP 400) and the chat is stuck for good. Each step here
fixes one kind of damage on a copy and never mutates a message dict it was given
(a changed message is a new dict), so the stored history stays byte-for-byte intact.
"""

from __future__ import annotations

import functools
import json
import operator
import re
from collections.abc import Sequence
from typing import Any

Message = dict[str, Any]

ROLES = frozenset({"system", "user", "assistant", "tool"})
MISSING_RESULT = "[no result: the call was interrupted before its result was saved]"
UNNAMED = "unnamed_tool_call"

# "[previous assistant message omitted]", "(no content)", "[placeholder]" and the like.
_PLACEHOLDER = re.compile(
    r"^\s*[\[(][^\])]*\b(omitted|placeholder|no content|empty|elided)\b[^\])]*[\])]\s*$",
    re.IGNORECASE,
)


def known_messages(messages: Sequence[Any]) -> list[Message]:
    """Drop entries that are not messages at all (non-dicts, unknown roles)."""
    return [m for m in messages if isinstance(m, dict) and m.get("role") in ROLES]


def call_ids(message: Message) -> list[str]:
    """The ids of an assistant message's tool calls (well-formed calls only)."""
    calls = message.get("tool_calls") if message.get("role") == "assistant" else None
    if not isinstance(calls, list):
        return []
    return [c["id"] for c in calls if isinstance(c, dict) and isinstance(c.get("id"), str)]


def call_names(message: Message) -> dict[str, Any]:
    """Call id -> function name for an assistant message's well-formed calls."""
    calls = message.get("tool_calls") if message.get("role") == "assistant" else None
    out: dict[str, Any] = {}
    for c in calls if isinstance(calls, list) else ():
        if not isinstance(c, dict):
            continue
        function = c.get("function")
        if isinstance(c.get("id"), str) and isinstance(function, dict):
            out[c["id"]] = function.get("name")
    return out


def _is_placeholder(message: Message) -> bool:
    if message.get("role") != "assistant" or message.get("tool_calls"):
        return False
    content = message.get("content")
    if content is None:
        return True
    if isinstance(content, str):
        return not content.strip() or _PLACEHOLDER.match(content) is not None
    return isinstance(content, list) and not content


def strip_placeholder_assistant_messages(messages: Sequence[Message]) -> list[Message]:
    """Assistant messages with nothing in them: providers reject empty content."""
    return [m for m in messages if not _is_placeholder(m)]


def canonical_arguments(raw: Any) -> str | None:
    """A call's arguments as the JSON-object string a provider accepts, or None when
    they cannot be one. The forms the tool registry repairs map to what it ran: nothing
    (None, "", JSON null) is ``{}``, an object is encoded, and an object encoded twice
    (a JSON string holding it, as some providers send) is decoded once."""
    if raw is None:
        return "{}"
    if isinstance(raw, dict):
        return json.dumps(raw, ensure_ascii=False)
    if not isinstance(raw, str):
        return None
    if not raw.strip():
        return "{}"  # some models send "" for a call without arguments
    return raw if _is_json_object(raw) else _decoded(raw)


@functools.lru_cache(maxsize=4096)
def _is_json_object(raw: str) -> bool:
    """Cached: the same stored calls are checked again on every step of every turn."""
    try:
        return isinstance(json.loads(raw), dict)
    except ValueError:
        return False


@functools.lru_cache(maxsize=1024)
def _decoded(raw: str) -> str | None:
    """``raw`` as a JSON-object string when it is JSON null or a JSON string holding
    one (encoded twice); None otherwise. Cached like :func:`_is_json_object`."""
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if value is None:
        return "{}"
    if isinstance(value, str) and _is_json_object(value):
        return value
    return None


def with_canonical_arguments(message: Message) -> Message:
    """An assistant message with each call's arguments in :func:`canonical_arguments`
    form where they are repairable, so a call the registry ran stays in the history
    sent later (dropped as malformed, its result would go too, and the user's message
    before it would be merged with the next one); ``message`` itself when none changes."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return message
    out: list[Any] = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            out.append(call)  # damage only the repair steps can handle
            continue
        raw = function.get("arguments")
        args = canonical_arguments(raw)
        fixed = args is not None and args is not raw
        out.append({**call, "function": {**function, "arguments": args}} if fixed else call)
    if all(map(operator.is_, out, calls)):
        return message
    return {**message, "tool_calls": out}


def _repaired_call(call: Any, seen: set[str], sanitize: bool) -> dict[str, Any] | None:
    if not isinstance(call, dict):
        return None
    call_id, original = call.get("id"), call.get("function")
    if not isinstance(call_id, str) or not call_id or call_id in seen:
        return None
    function: dict[str, Any] = original if isinstance(original, dict) else {}
    if function is not original and not sanitize:
        return None
    name = function.get("name")
    if not isinstance(name, str) or not name.strip():
        if not sanitize:
            return None
        function = {**function, "name": UNNAMED}
    args = canonical_arguments(function.get("arguments"))
    if args is None:
        if not sanitize:
            return None
        raw = function.get("arguments")
        args = json.dumps({"invalid_arguments": str(raw)[:2000]}, ensure_ascii=False)
    seen.add(call_id)
    unchanged = function is original and args is function.get("arguments")
    if unchanged and call.get("type") == "function":
        return call
    return {**call, "type": "function", "function": {**function, "arguments": args}}


def strip_malformed_tool_calls(
    messages: Sequence[Message], inflight_from: int | None = None
) -> list[Message]:
    """Drop calls a provider would refuse to see again: no id, a repeated id, a name that
    is missing or not a string, arguments that are not a JSON object (nor one of the
    forms :func:`canonical_arguments` repairs, which are kept repaired). Their results turn
    into orphans, which the next step removes; that pair is what heals a stuck chat.

    Calls of the turn in flight (from index ``inflight_from`` on) are sanitized instead
    (a stand-in name, the raw arguments wrapped in an object), so the model still sees
    the "Error: ..." result its bad call earned and can correct itself."""
    out: list[Message] = []
    seen: set[str] = set()
    for index, m in enumerate(messages):
        if m.get("role") != "assistant" or "tool_calls" not in m:
            out.append(m)
            continue
        raw = m.get("tool_calls")
        calls: list[Any] = raw if isinstance(raw, list) else []
        sanitize = inflight_from is not None and index >= inflight_from
        kept = [r for r in (_repaired_call(c, seen, sanitize) for c in calls) if r is not None]
        unchanged = len(kept) == len(calls) and all(map(operator.is_, kept, calls))
        if kept and unchanged:
            out.append(m)
        elif kept:
            out.append({**m, "tool_calls": kept})
        else:
            bare = {k: v for k, v in m.items() if k != "tool_calls"}
            if not _is_placeholder(bare):
                out.append(bare)
    return out


def drop_orphan_tool_results(messages: Sequence[Message]) -> list[Message]:
    """Keep a tool result only inside the block right after the assistant message that
    made its call, once per call; anything else has no call a provider could match."""
    out: list[Message] = []
    pending: set[str] = set()
    for m in messages:
        if m.get("role") == "tool":
            call_id = m.get("tool_call_id")
            if isinstance(call_id, str) and call_id in pending:
                pending.discard(call_id)
                out.append(m)
            continue
        pending = set(call_ids(m))
        out.append(m)
    return out


def backfill_missing_tool_results(messages: Sequence[Message]) -> list[Message]:
    """Give every call exactly one result: a placeholder where the real one is missing."""
    out: list[Message] = []
    i, n = 0, len(messages)
    while i < n:
        m = messages[i]
        out.append(m)
        i += 1
        ids = call_ids(m)
        if not ids:
            continue
        answered: set[Any] = set()
        while i < n and messages[i].get("role") == "tool":
            answered.add(messages[i].get("tool_call_id"))
            out.append(messages[i])
            i += 1
        for call_id in ids:
            if call_id not in answered:
                out.append({"role": "tool", "tool_call_id": call_id, "content": MISSING_RESULT})
    return out


def repair_pairs(messages: Sequence[Message]) -> list[Message]:
    """Orphans out, then missing results in: the pairing invariant after any cut."""
    return backfill_missing_tool_results(drop_orphan_tool_results(messages))


def _parts(content: Any) -> list[Any]:
    if isinstance(content, list):
        return list(content)
    return [{"type": "text", "text": content}] if content else []


def _joined(first: Any, second: Any) -> Any:
    if first is None or first == "":
        return second
    if second is None or second == "":
        return first
    if isinstance(first, str) and isinstance(second, str):
        return f"{first}\n\n{second}"
    return _parts(first) + _parts(second)


def _merged(first: Message, second: Message) -> Message:
    """One message saying what both said; only an assistant's later message has calls
    (an assistant message with calls is always followed by its results)."""
    merged = {**first, **second, "content": _joined(first.get("content"), second.get("content"))}
    media = [*(first.get("media") or ()), *(second.get("media") or ())]
    if media:  # the attachments of both (bot/media): none is lost to the merge
        merged["media"] = media
    return merged


def merge_consecutive_roles(messages: Sequence[Message]) -> list[Message]:
    """Two user (or assistant) messages in a row become one. A failed model call leaves
    the user's message stored unanswered, and chat templates that demand alternating
    roles refuse the next request with a 400 for good; the merge happens on the copy."""
    out: list[Message] = []
    for m in messages:
        role = m.get("role")
        previous = out[-1] if out else None
        if (
            previous is not None
            and role in ("user", "assistant")
            and previous.get("role") == role
            and not previous.get("tool_calls")
        ):
            out[-1] = _merged(previous, m)
        else:
            out.append(m)
    return out
