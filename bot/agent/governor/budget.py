"""The token budget: the model's real window, and token counts that stay cheap.

A window guessed too large earns a context-length 400 from the provider, so the window
comes from litellm's model map when the model is in it; self-hosted and unknown models
(``get_model_info`` raises for them) fall back to ``[context] max_context_tokens``.

Counting goes through ``litellm.token_counter`` (offline: it uses the tokenizer files
litellm ships; we never call ``tiktoken.get_encoding`` ourselves, which downloads).
Counts are cached per distinct string, and the governor counts from the newest message
backwards and stops at the limit, so a 5,000-message session costs what its window does.
Most requests are far inside the window: an upper bound from string lengths
(:class:`UpperBound`) proves that without running the tokenizer at all.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

TextCounter = Callable[[str], int]

MESSAGE_OVERHEAD = 4  # role and separators, as OpenAI's cookbook counts them
CALL_OVERHEAD = 8  # id, type and the JSON around one tool call
# One image as a vision model counts it, at most: providers scale a picture down to a
# fixed size first (Anthropic's largest is about 1,600 tokens, OpenAI's high detail
# about 1,100), so a photo costs this whatever its bytes.
IMAGE_TOKENS = 1_600
_CACHE_MAX = 50_000


def estimate_tokens(text: str) -> int:
    """A tokenizer-free count that errs high: ~3 UTF-8 bytes a token (English runs ~4)."""
    return len(text.encode("utf-8", errors="replace")) // 3 + 1


class TokenCounter:
    """Counts messages with a per-string cache keyed by (hash, length), so replayed
    history is counted once per process and the cache holds no copies of the text."""

    def __init__(self, count_text: TextCounter = estimate_tokens) -> None:
        self._count_text = count_text
        self._cache: dict[tuple[int, int], int] = {}
        # The tool list is one cached object per tool set (see the registry): counted
        # once per object, not re-serialized for every request.
        self._tools_seen: tuple[object, int] | None = None

    def text(self, text: str) -> int:
        key = (hash(text), len(text))
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        try:
            count = self._count_text(text)
        except Exception:  # a tokenizer failure must never fail a turn
            log.debug("token counter failed; estimating", exc_info=True)
            count = estimate_tokens(text)
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[key] = count
        return count

    def message(self, message: Mapping[str, Any]) -> int:
        return message_count(message, self.text)

    def messages(self, messages: Iterable[Mapping[str, Any]]) -> int:
        return sum(self.message(m) for m in messages)

    def tools(self, definitions: Iterable[Mapping[str, Any]] | None) -> int:
        """Tool definitions travel with every request and count against the window."""
        if not definitions:
            return 0
        seen = self._tools_seen
        if seen is not None and seen[0] is definitions:
            return seen[1]
        count = self.text(json.dumps(list(definitions), ensure_ascii=False, sort_keys=True))
        self._tools_seen = (definitions, count)
        return count


def message_count(message: Mapping[str, Any], count: TextCounter) -> int:
    """One message's tokens: its texts as ``count`` counts them, plus the overheads.
    A function, not a method, so the length bound passes a plain function and pays no
    method lookup per string (it runs for every message of every request)."""
    n = MESSAGE_OVERHEAD
    content = message.get("content")
    if isinstance(content, str):
        n += count(content)
    elif isinstance(content, list):
        n += _parts_count(content, count)
    elif content is not None:
        n += count(json.dumps(content, ensure_ascii=False, default=str))
    media = message.get("media")  # a stored user message's attachments (bot/media)
    if isinstance(media, list):
        n += IMAGE_TOKENS * sum(1 for e in media if isinstance(e, dict) and e.get("see"))
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            n += CALL_OVERHEAD
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                name, arguments = function.get("name"), function.get("arguments")
                n += count(name) if isinstance(name, str) else 0
                n += count(arguments) if isinstance(arguments, str) else 0
    for key in ("name", "tool_call_id"):
        value = message.get(key)
        if isinstance(value, str):
            n += len(value) // 3 + 1  # short ids and names: not worth the tokenizer
    return n


def _parts_count(parts: list[Any], count: TextCounter) -> int:
    """Content parts: texts counted, an image as :data:`IMAGE_TOKENS` (never its data
    URL's length), anything else as its JSON."""
    n = 0
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            n += count(part["text"])
        elif kind == "image_url":
            n += IMAGE_TOKENS
        else:
            n += count(json.dumps(part, ensure_ascii=False, default=str))
    return n


def utf8_upper_bound(text: str) -> int:
    """At least the token count of any byte-level tokenizer (every token is one byte or
    more), plus two for a tokenizer that adds begin/end markers; no tokenizer call."""
    return (len(text) if text.isascii() else len(text.encode("utf-8", errors="replace"))) + 2


class UpperBound(TokenCounter):
    """Token counts that are never below the real ones, at the cost of a length: a
    request whose upper bound fits needs no exact count at all."""

    def __init__(self) -> None:
        super().__init__(utf8_upper_bound)

    def text(self, text: str) -> int:
        return utf8_upper_bound(text)

    def message(self, message: Mapping[str, Any]) -> int:
        """:meth:`TokenCounter.message` for the bound, on the governor's path for every
        message of every request: the plain text message is counted inline."""
        content = message.get("content")
        if type(content) is str and len(message) == 2:  # {"role", "content"}: most of them
            return MESSAGE_OVERHEAD + utf8_upper_bound(content)
        return message_count(message, utf8_upper_bound)


def litellm_counter(litellm: Any, model: str | None) -> TokenCounter:
    """Exact counts with the model's tokenizer (cl100k for models litellm does not know)."""
    name = model or "gpt-4o-mini"

    def count(text: str) -> int:
        return exact_count(litellm, name, text)

    return TokenCounter(count)


def exact_count(litellm: Any, model: str, text: str) -> int:
    """``litellm.token_counter`` with litellm's counter on for this call: the daemon
    turns it off for litellm's own pricing of streamed calls (bot/agent/llm/loader.py).
    Synchronous, so no other task sees the switch on."""
    off = litellm.disable_token_counter
    litellm.disable_token_counter = False
    try:
        return int(litellm.token_counter(model=model, text=text))
    finally:
        litellm.disable_token_counter = off


@dataclass(frozen=True, slots=True)
class Budget:
    """How many tokens the prompt may use: the window minus room for the answer."""

    window: int
    reserve: int
    source: str  # "model" (litellm's model map) or "config"

    @property
    def limit(self) -> int:
        return self.window - min(self.reserve, self.window // 2)


def model_window(litellm: Any, model: str | None) -> int | None:
    """The model's input window from litellm's bundled map, None when it is not mapped."""
    if litellm is None or not model:
        return None
    try:
        info = litellm.get_model_info(model)
    except Exception:  # unknown or self-hosted model: litellm raises
        return None
    for key in ("max_input_tokens", "max_tokens"):
        value = info.get(key) if isinstance(info, Mapping) else None
        if isinstance(value, int) and value > 0:
            return value
    return None


def resolve_budget(
    litellm: Any, model: str | None, *, max_context_tokens: int, reserve_tokens: int
) -> Budget:
    window = model_window(litellm, model)
    if window is None:
        return Budget(max_context_tokens, reserve_tokens, "config")
    return Budget(window, reserve_tokens, "model")
