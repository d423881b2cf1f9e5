"""A fake Anthropic Messages API (``POST /v1/messages``, answered whole, not streamed).

litellm's ``anthropic/`` provider talks to it over real HTTP (pass ``fake.root`` as
``api_base``), so tests exercise litellm's Anthropic request building and its mapping of
Anthropic's errors, not a mock of them. What the real API refuses where this daemon can
get it wrong is refused here too, worded as Anthropic words it (a 400
``invalid_request_error``; the request is kept in ``rejected``):

- ``model``, ``max_tokens`` and ``messages`` are required;
- ``max_tokens`` above the model's output limit (``output_limits``, else
  :data:`OUTPUT_LIMIT`);
- a prompt over the model's window (``windows``, else :data:`WINDOW`), counted at one
  token per three characters of its JSON (a tokenizer counting more than the daemon's),
  or a prompt and ``max_tokens`` together over it;
- more than four blocks marked with ``cache_control``;
- with ``key`` set, another ``x-api-key`` (a 401 ``authentication_error``).

Answers: scripted ones first (``reply``, ``reply_error``), else ``default``, which echoes
the last user message through ``final_result`` when that tool is offered.
"""

from __future__ import annotations

import itertools
import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.fakes.loopback import LoopbackServer

WINDOW = 200_000
OUTPUT_LIMIT = 64_000
CACHE_BLOCKS = 4
FINAL_RESULT = "final_result"

_ids = itertools.count(1)


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    body: dict[str, Any]


Responder = Callable[[dict[str, Any]], Reply]


def error(status: int, kind: str, message: str) -> Reply:
    return Reply(status, {"type": "error", "error": {"type": kind, "message": message}})


def message(content: list[dict[str, Any]], stop_reason: str = "end_turn") -> Reply:
    """A Messages API answer holding ``content`` blocks."""
    return Reply(
        200,
        {
            "id": f"msg_fake{next(_ids)}",
            "type": "message",
            "role": "assistant",
            "model": "claude-fake",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 20},
        },
    )


def tool_use(name: str, arguments: dict[str, Any]) -> Reply:
    """An answer calling one tool."""
    call = {"type": "tool_use", "id": f"toolu_fake{next(_ids)}", "name": name}
    return message([{**call, "input": arguments}], "tool_use")


def final(answer: str) -> Reply:
    return tool_use(FINAL_RESULT, {"answer": answer})


def last_user_text(body: dict[str, Any]) -> str:
    """What the user typed last (the daemon's runtime block after it left out)."""
    for m in reversed(body.get("messages") or []):
        if m.get("role") != "user":
            continue
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        text = "\n".join(b.get("text", "") for b in blocks or [] if b.get("type") == "text")
        if text:
            return text.split("\n\n[Runtime Context", 1)[0]
    return ""


def echo(body: dict[str, Any]) -> Reply:
    answer = f"echo: {last_user_text(body)}"
    if any(t.get("name") == FINAL_RESULT for t in body.get("tools") or []):
        return final(answer)
    return message([{"type": "text", "text": answer}])


def prompt_tokens(body: dict[str, Any]) -> int:
    """The prompt's tokens as this fake counts them: a character in three of its JSON."""
    prompt = [body.get("system"), body.get("messages"), body.get("tools")]
    return len(json.dumps(prompt, ensure_ascii=False)) // 3


def cache_marks(value: Any) -> int:
    """Blocks marked with ``cache_control`` anywhere in ``value``."""
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(cache_marks(v) for v in value.values())
    if isinstance(value, list):
        return sum(cache_marks(v) for v in value)
    return 0


class FakeAnthropic(LoopbackServer):
    """Use as ``async with FakeAnthropic() as fake``; ``fake.root`` is the api_base."""

    def __init__(self, default: Responder = echo) -> None:
        super().__init__()
        self.default = default
        self.key: str | None = None
        self.windows: dict[str, int] = {}
        self.output_limits: dict[str, int] = {}
        self.requests: list[dict[str, Any]] = []  # each request's JSON body
        self.headers: list[dict[str, str]] = []
        self.rejected: list[dict[str, Any]] = []
        self._queue: deque[Reply] = deque()

    def reply(self, reply: Reply) -> None:
        self._queue.append(reply)

    def reply_error(self, status: int, kind: str, message: str) -> None:
        self._queue.append(error(status, kind, message))

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/messages", self._handle)

    def refusal(self, body: dict[str, Any]) -> str:
        """Why the real API would refuse ``body`` ("" when it would not)."""
        missing = [k for k in ("model", "max_tokens", "messages") if k not in body]
        if missing:
            return f"{missing[0]}: Field required"
        model, max_tokens = str(body["model"]), int(body["max_tokens"])
        most = self.output_limits.get(model, OUTPUT_LIMIT)
        if max_tokens > most:
            return (
                f"max_tokens: {max_tokens} > {most}, which is the maximum allowed number "
                f"of output tokens for {model}"
            )
        window, tokens = self.windows.get(model, WINDOW), prompt_tokens(body)
        if tokens > window:
            return f"prompt is too long: {tokens} tokens > {window} maximum"
        if tokens + max_tokens > window:
            return (
                f"input length and `max_tokens` exceed context limit: {tokens} + "
                f"{max_tokens} > {window}, decrease input length or `max_tokens` and try again"
            )
        marks = cache_marks([body.get("system"), body["messages"], body.get("tools")])
        if marks > CACHE_BLOCKS:
            return (
                f"A maximum of {CACHE_BLOCKS} blocks with cache_control may be provided. "
                f"Found {marks}."
            )
        return ""

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        if self.key is not None and request.headers.get("x-api-key") != self.key:
            reply = error(401, "authentication_error", "invalid x-api-key")
        elif body.get("stream"):
            reply = error(400, "invalid_request_error", "this fake answers whole, never streamed")
        elif why := self.refusal(body):
            self.rejected.append(body)
            reply = error(400, "invalid_request_error", why)
        else:
            reply = self._queue.popleft() if self._queue else self.default(body)
        return web.json_response(reply.body, status=reply.status)
