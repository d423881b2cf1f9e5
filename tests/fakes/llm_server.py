"""A scriptable fake OpenAI-compatible chat-completions server.

The real ``litellm`` library talks to it over real HTTP (pass ``fake.url`` as
``api_base``), so tests exercise litellm's request building, response parsing and
exception mapping instead of a mock of them.

Usage::

    async with FakeLLM() as fake:
        fake.reply_text("hi")
        fake.reply_tool_calls([("get_weather", {"city": "Paris"})])
        fake.reply_error(status=500)
        fake.reply_text("late", delay=2.0)        # trips a client timeout
        fake.reply(text_reply("now"), held=event)  # answered once the test sets event
        fake.reply_no_choices()
        fake.reply(endless_answer())  # streamed, an answer that never ends
        fake.reply(replace(tool_calls_reply(calls), whole_calls=True))  # streamed: each
                                    # call whole in one event, all at index 0 (Ollama /v1)
        fake.for_model("fake-fallback").reply_text("from the fallback")
        fake.strict = True    # 400 (OpenAI-style body) for requests that break the
                              # tool-call pairing rules in tests/fakes/provider_rules.py
        fake.strict_tools = "mcp_"  # 400 when a tool named so breaks the schema rules
                                    # there (the subset every provider accepts)
        fake.alternating = True  # 400 for two user (or assistant) messages in a row
        fake.hear("hello there")  # the next /v1/audio/transcriptions answer (whisper's JSON)
        fake.transcriptions[0]    # (model, file name, bytes) of each transcription asked
        ...
        await fake.wait_requests(3)
        fake.requests[0].json["model"]

Scripted replies are consumed FIFO; a reply queued with ``for_model`` is served only
to requests whose ``"model"`` field matches (provider prefixes such as ``openai/``
are stripped by litellm before sending). When no scripted reply fits, ``default``
answers.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
import json
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Self

import pytest_asyncio
from aiohttp import web

from tests.fakes.loopback import LoopbackServer
from tests.fakes.provider_rules import alternation_violations, tool_violations, violations
from tests.fakes.waiting import STEP_S

FINAL_RESULT = "final_result"

Arguments = Mapping[str, Any] | str | None


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer: a JSON body with an HTTP status, optionally delayed."""

    status: int = 200
    body: Any = None
    delay: float = 0.0
    headers: Mapping[str, str] = field(default_factory=dict)
    # Streamed (a request with stream=true): seconds between SSE events, characters of
    # content or arguments per event, or the exact argument fragments of each call (a
    # list per call; one fragment = a provider that sends whole arguments at once).
    pace: float = 0.0
    piece: int = 24
    fragments: tuple[tuple[str, ...], ...] | None = None
    # Answered only once this is set (after any delay): a test decides when a turn may
    # end instead of guessing how long the steps before take on a loaded machine.
    held: asyncio.Event | None = field(default=None, compare=False)
    # Streamed only: after this many SSE events the connection is dropped (a provider
    # that fails mid-answer), or the stream goes silent until the client gives up.
    cut_at: int | None = None
    stall_at: int | None = None
    # Streamed only: the last call's arguments (or, with no call, the content) never end:
    # after those scripted, ``piece`` more characters an event until the client hangs up.
    endless: bool = False
    # Streamed only: each call whole (id, name, all its arguments) in one event, every
    # one at index 0, as Ollama's OpenAI-compatible /v1 streams parallel calls.
    whole_calls: bool = False


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """A request as the server saw it; ``json`` is None when the body was not JSON."""

    path: str
    headers: Mapping[str, str]
    json: Any
    model: str | None
    body: bytes = b""  # the request's bytes as they arrived


Responder = Callable[[Any], Reply]

_call_ids = itertools.count(1)
_completion_ids = itertools.count(1)


def _last_user_text(request: Any) -> str:
    messages = request.get("messages") if isinstance(request, dict) else None
    for message in reversed(messages or []):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            # The daemon appends a runtime-metadata block; echo only what the user typed.
            return content.split("\n\n[Runtime Context", 1)[0]
        if isinstance(content, list):
            return " ".join(
                str(part.get("text", ""))
                for part in content
                if isinstance(part, dict) and part.get("type") == "text"
            )
    return ""


def _offered_tools(request: Any) -> set[str]:
    tools = request.get("tools") if isinstance(request, dict) else None
    names: set[str] = set()
    for tool in tools or []:
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
            name = tool["function"].get("name")
            if isinstance(name, str):
                names.add(name)
    return names


def usage(prompt_tokens: int = 10, completion_tokens: int = 5) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def completion_body(
    message: Mapping[str, Any], *, finish_reason: str, model: str = "fake-model"
) -> dict[str, Any]:
    """A complete, OpenAI-shaped chat.completion body around one message."""
    return {
        "id": f"chatcmpl-fake{next(_completion_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_fake",
        "choices": [
            {
                "index": 0,
                "message": dict(message),
                "logprobs": None,
                "finish_reason": finish_reason,
            }
        ],
        "usage": usage(),
    }


def text_reply(text: str, *, delay: float = 0.0) -> Reply:
    message = {"role": "assistant", "content": text, "refusal": None}
    return Reply(body=completion_body(message, finish_reason="stop"), delay=delay)


def tool_calls_reply(
    calls: Iterable[tuple[str | None, Arguments]],
    *,
    content: str | None = None,
    delay: float = 0.0,
) -> Reply:
    """Several calls in one response; dict arguments are JSON-encoded, strings sent raw."""
    tool_calls = []
    for name, arguments in calls:
        raw = arguments if isinstance(arguments, str) else json.dumps(dict(arguments or {}))
        function: dict[str, Any] = {"arguments": raw}
        if name is not None:
            function["name"] = name
        tool_calls.append(
            {"id": f"call_fake{next(_call_ids)}", "type": "function", "function": function}
        )
    message = {"role": "assistant", "content": content, "tool_calls": tool_calls, "refusal": None}
    return Reply(body=completion_body(message, finish_reason="tool_calls"), delay=delay)


def streamed_answer(answer: str, *, seconds: float = 2.0, piece: int = 8) -> Reply:
    """A ``final_result`` answer the model writes over about ``seconds``, ``piece``
    characters an event: a slow model, for streamed previews."""
    reply = tool_calls_reply([(FINAL_RESULT, {"answer": answer})])
    return replace(reply, pace=seconds / (len(answer) // piece + 6), piece=piece)


def endless_answer(*, pace: float = 0.005, piece: int = 40) -> Reply:
    """A ``final_result`` answer that is written for ever (a model in a loop, a proxy
    that never sends the finish): ``piece`` characters every ``pace`` seconds."""
    reply = tool_calls_reply([(FINAL_RESULT, '{"answer": "')])
    return replace(reply, pace=pace, piece=piece, endless=True)


def error_reply(
    status: int = 500,
    body: Any = None,
    *,
    delay: float = 0.0,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """A provider-like error JSON (OpenAI's shape) unless ``body`` is given."""
    if body is None:
        kind, code = {
            400: ("invalid_request_error", None),
            401: ("invalid_request_error", "invalid_api_key"),
            404: ("invalid_request_error", "model_not_found"),
            429: ("requests", "rate_limit_exceeded"),
        }.get(status, ("server_error", None))
        message = {
            401: "Incorrect API key provided: sk-te****. You can find your API key at ...",
            404: "The model `fake-model` does not exist or you do not have access to it.",
            429: "Rate limit reached for requests. Please try again in 20ms.",
        }.get(status, f"The server had an error while processing your request ({status}).")
        body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return Reply(status=status, body=body, delay=delay, headers=dict(headers or {}))


def default_responder(request: Any) -> Reply:
    """Echo the last user message, via ``final_result`` when that tool is offered."""
    answer = f"echo: {_last_user_text(request)}"
    if FINAL_RESULT in _offered_tools(request):
        return tool_calls_reply([(FINAL_RESULT, {"answer": answer})])
    return text_reply(answer)


def image_responder(request: Any) -> Reply:
    """Answers about the pictures in the last user message (the digest and size of each
    image part's bytes, decoded from its data URL), else :func:`default_responder`: a
    model that checks the image arrived intact and says what it got."""
    messages = request.get("messages") if isinstance(request, dict) else None
    users = [m for m in messages or [] if isinstance(m, dict) and m.get("role") == "user"]
    content = users[-1].get("content") if users else None
    parts = content if isinstance(content, list) else []
    urls = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
    if not urls:
        return default_responder(request)
    seen = []
    for url in urls:
        head, _, data = url.partition(",")
        raw = base64.b64decode(data)
        seen.append(f"{head}: {len(raw)} bytes, sha256 {hashlib.sha256(raw).hexdigest()[:16]}")
    return tool_calls_reply([(FINAL_RESULT, {"answer": "; ".join(seen)})])


def seen_as(data: bytes, mime: str) -> str:
    """What :func:`image_responder` says about one picture of these bytes."""
    digest = hashlib.sha256(data).hexdigest()[:16]
    return f"data:{mime};base64: {len(data)} bytes, sha256 {digest}"


class ReplyQueue:
    """The scripting API, shared by the server and its per-model views."""

    def __init__(self) -> None:
        self._queue: deque[Reply] = deque()

    def reply(
        self, reply: Reply, *, delay: float | None = None, held: asyncio.Event | None = None
    ) -> Self:
        """Queue any reply; ``delay`` overrides the reply's own delay; ``held``: answered
        only once that event is set."""
        if delay is not None:
            reply = replace(reply, delay=delay)
        self._queue.append(reply if held is None else replace(reply, held=held))
        return self

    def reply_text(self, text: str, *, delay: float = 0.0) -> Self:
        return self.reply(text_reply(text, delay=delay))

    def reply_tool_calls(
        self,
        calls: Iterable[tuple[str | None, Arguments]],
        *,
        content: str | None = None,
        delay: float = 0.0,
    ) -> Self:
        return self.reply(tool_calls_reply(calls, content=content, delay=delay))

    def held_answer(self, answer: str) -> asyncio.Event:
        """The next call answers ``answer`` (through final_result) once the returned
        event is set: a turn that waits on the model as long as a test needs."""
        release = asyncio.Event()
        self.reply(tool_calls_reply([(FINAL_RESULT, {"answer": answer})]), held=release)
        return release

    def reply_error(
        self,
        status: int = 500,
        body: Any = None,
        *,
        delay: float = 0.0,
        headers: Mapping[str, str] | None = None,
    ) -> Self:
        return self.reply(error_reply(status, body, delay=delay, headers=headers))

    def reply_no_choices(self, *, delay: float = 0.0) -> Self:
        body = completion_body({"role": "assistant", "content": ""}, finish_reason="stop")
        body["choices"] = []
        return self.reply(Reply(body=body, delay=delay))

    def reply_raw(self, status: int, body: Any, *, delay: float = 0.0) -> Self:
        """Any JSON body (or a str sent verbatim), for malformed-response tests."""
        return self.reply(Reply(status=status, body=body, delay=delay))

    def pending(self) -> int:
        return len(self._queue)

    def _pop(self) -> Reply | None:
        return self._queue.popleft() if self._queue else None


class FakeLLM(LoopbackServer, ReplyQueue):
    """The fake server; use as ``async with FakeLLM() as fake``."""

    def __init__(self, default: Responder = default_responder, *, strict: bool = False) -> None:
        super().__init__()
        self.default = default
        self.strict = strict
        self.strict_tools: str | None = None
        self.alternating = False
        self.rejected: list[RecordedRequest] = []
        self.requests: list[RecordedRequest] = []
        self.streamed: list[tuple[float, float]] = []  # (first, last) event of each stream
        self._per_model: dict[str, ReplyQueue] = {}
        self._changed = asyncio.Condition()
        self._heard: deque[tuple[int, str]] = deque()  # (status, text) per transcription
        self.transcriptions: list[tuple[str, str, bytes]] = []

    @property
    def url(self) -> str:
        """The ``api_base`` for litellm, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"{self.root}/v1"

    def for_model(self, model: str) -> ReplyQueue:
        """Replies served only to requests whose ``model`` field equals ``model``."""
        return self._per_model.setdefault(model, ReplyQueue())

    def models(self) -> list[str | None]:
        """The ``model`` field of every recorded request, in order."""
        return [r.model for r in self.requests]

    async def wait_requests(
        self,
        n: int,
        timeout: float = STEP_S,
    ) -> list[RecordedRequest]:
        """Wait until at least ``n`` requests have arrived."""
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: len(self.requests) >= n), timeout)
        return list(self.requests)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_post("/chat/completions", self._handle)
        app.router.add_post("/v1/audio/transcriptions", self._transcribe)

    def hear(self, text: str, status: int = 200) -> None:
        """The next transcription's text (or an error status, OpenAI-style)."""
        self._heard.append((status, text))

    async def _transcribe(self, request: web.Request) -> web.StreamResponse:
        """OpenAI's transcription endpoint: a multipart form with ``file`` and ``model``."""
        form = await request.post()
        upload, model = form.get("file"), str(form.get("model", ""))
        if not isinstance(upload, web.FileField):
            return web.json_response(error_reply(400).body, status=400)
        self.transcriptions.append((model, upload.filename, upload.file.read()))
        status, text = self._heard.popleft() if self._heard else (200, "")
        if status != 200:
            return web.json_response(error_reply(status).body, status=status)
        return web.json_response({"text": text})

    def _next_reply(self, payload: Any, model: str | None) -> Reply:
        if model is not None and model in self._per_model:
            scripted = self._per_model[model]._pop()
            if scripted is not None:
                return scripted
        scripted = self._pop()
        if scripted is not None:
            return scripted
        return self.default(payload)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            payload: Any = json.loads(raw)
        except ValueError:
            payload = None
        model = payload.get("model") if isinstance(payload, dict) else None
        async with self._changed:
            self.requests.append(
                RecordedRequest(
                    path=request.path,
                    headers=dict(request.headers),
                    json=payload,
                    body=raw,
                    model=model if isinstance(model, str) else None,
                )
            )
            self._changed.notify_all()
        if not isinstance(payload, dict):
            return web.json_response(error_reply(400, None).body, status=400)
        if self.strict or self.alternating:
            messages = payload.get("messages")
            broken = violations(messages) if self.strict else []
            broken += alternation_violations(messages) if self.alternating else []
            if broken:
                self.rejected.append(self.requests[-1])
                return web.json_response(broken[0].body(), status=400)
        if self.strict_tools is not None:
            tools = [
                t
                for t in payload.get("tools") or []
                if str((t.get("function") or {}).get("name", "")).startswith(self.strict_tools)
            ]
            broken_tools = tool_violations(tools)
            if broken_tools:
                self.rejected.append(self.requests[-1])
                return web.json_response(broken_tools[0].body(), status=400)
        reply = self._next_reply(payload, model if isinstance(model, str) else None)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.held is not None:
            await reply.held.wait()
        if isinstance(reply.body, str):
            return web.Response(
                text=reply.body,
                status=reply.status,
                headers=reply.headers,
                content_type="application/json",
            )
        body = reply.body
        if reply.status == 200 and isinstance(body, dict) and isinstance(model, str):
            body = {**body, "model": model}
        if payload.get("stream") and reply.status == 200 and isinstance(body, dict):
            return await _stream(request, body, reply, self.streamed)
        return web.json_response(body, status=reply.status, headers=reply.headers)


def sse_events(body: Mapping[str, Any], reply: Reply) -> list[dict[str, Any]]:
    """A chat.completion body as the chat.completion.chunk events a provider streams:
    the role, the content in pieces, each tool call's id and name, then its arguments
    in pieces, the finish reason, and the usage."""
    choice = body["choices"][0] if body.get("choices") else None
    head = {k: body[k] for k in ("id", "created", "model") if k in body}
    head["object"] = "chat.completion.chunk"

    def event(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    if choice is None:
        return [{**head, "choices": []}]
    message, step = choice["message"], max(1, reply.piece)
    events = [event({"role": "assistant", "content": ""})]
    content = message.get("content") or ""
    events += [event({"content": content[i : i + step]}) for i in range(0, len(content), step)]
    for index, call in enumerate(message.get("tool_calls") or ()):
        function = call["function"]
        raw, whole = function.get("arguments") or "", reply.whole_calls
        first = {"index": 0 if whole else index, "id": call["id"], "type": "function"}
        first["function"] = {"name": function.get("name"), "arguments": raw if whole else ""}
        events.append(event({"tool_calls": [first]}))
        if whole:
            continue
        parts = (
            reply.fragments[index]
            if reply.fragments is not None
            else [raw[i : i + step] for i in range(0, len(raw), step)]
        )
        events += [
            event({"tool_calls": [{"index": index, "function": {"arguments": p}}]}) for p in parts
        ]
    events.append(event({}, choice.get("finish_reason") or "stop"))
    events.append({**head, "choices": [], "usage": body.get("usage") or usage()})
    return events


async def _stream(
    request: web.Request, body: Mapping[str, Any], reply: Reply, log: list[tuple[float, float]]
) -> web.StreamResponse:
    """Server-sent events, each written in two halves (split mid-UTF-8 where the cut
    falls in a character: the client must join bytes, not decode each read)."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", **reply.headers})
    await response.prepare(request)
    first = time.monotonic()
    events = sse_events(body, reply)
    for number, event in enumerate(events):
        if number and reply.pace:
            await asyncio.sleep(reply.pace)
        if number == reply.cut_at:
            assert request.transport is not None
            request.transport.close()  # no [DONE], no end of the chunked body
            return response
        if number == reply.stall_at:
            await asyncio.Event().wait()  # silent until the client hangs up
        if number == len(events) - 2:  # the finish: before the client can have it
            if reply.endless:
                return await _endless(response, body, event, reply)
            log.append((first, time.monotonic()))
        data = f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode()
        half = len(data) // 2
        await response.write(data[:half])
        await response.write(data[half:])
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


async def _endless(
    response: web.StreamResponse, body: Mapping[str, Any], finish: dict[str, Any], reply: Reply
) -> web.StreamResponse:
    """In place of the ``finish`` event, more of the last call's arguments (else of the
    content) for ever: until the client closes the connection."""
    calls = body["choices"][0]["message"].get("tool_calls") or ()
    text = ("la " * reply.piece)[: reply.piece]
    more: dict[str, Any] = {"content": text}
    if calls:
        more = {"tool_calls": [{"index": len(calls) - 1, "function": {"arguments": text}}]}
    event = {**finish, "choices": [{"index": 0, "delta": more, "finish_reason": None}]}
    data = f"data: {json.dumps(event)}\n\n".encode()
    try:
        while True:
            await response.write(data)
            await asyncio.sleep(reply.pace)
    except ConnectionError:  # the client hung up: what an endless stream waits for
        return response


@pytest_asyncio.fixture
async def fake_llm() -> AsyncIterator[FakeLLM]:
    """A started FakeLLM, stopped after the test."""
    async with FakeLLM() as fake:
        yield fake
