"""tests.fakes.FakeLLM in its own process, so the server's CPU is not billed to the
process under test (and is measured on its own).

Run as ``python -m bench.fake_llm_server --delay 1.0``: prints ``PORT <n>`` once it
listens and serves until stdin closes. Every request is answered by the default
responder (``final_result`` when that tool is offered, else a text echo) after
``delay`` seconds; requests are counted, not recorded. ``GET /bench/stats`` returns
``{"requests": n, "messages": m, "cpu_s": s}`` (``m``: messages summed over requests).

``--script conversation`` answers per bench/conversation.py instead (the scripted chat
of the token comparison) and keeps every request body: ``GET /bench/requests`` returns
them in arrival order.

Unlike the test fake, it also answers ``"stream": true`` (nanobot always streams): the
same reply as server-sent ``chat.completion.chunk`` events, then ``data: [DONE]``.

``--stream-s S`` makes it a model that writes: a streamed answer is the echo followed by
:data:`STREAMED_TAIL`, written over about ``S`` seconds in 8-character pieces (the test
fake's events), and the moment the first answer characters were written is kept per
question: ``GET /bench/first_tokens`` returns ``{question: time.monotonic()}`` (the
clock the fake platforms stamp what they show with) and forgets them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import time
from dataclasses import replace
from typing import Any

from aiohttp import web

from bench import conversation
from tests.fakes.llm_server import (
    FakeLLM,
    Reply,
    Responder,
    default_responder,
    sse_events,
    streamed_answer,
)

SCRIPTS: dict[str, Responder] = {"conversation": conversation.respond}
# What a writing model's answer adds to the echo (bench/driving.py's run spec "tail").
STREAMED_TAIL = " and" + " then a few more words that take the model a while to write" * 6
ANSWER_KEY = '"answer": "'  # in the final_result arguments, what precedes the answer


class _CountingFake(FakeLLM):
    def __init__(self, delay: float, script: str | None = None, stream_s: float = 0.0) -> None:
        answer = SCRIPTS[script] if script else default_responder
        self.stream_s = stream_s
        self.first_tokens: dict[str, float] = {}  # question -> first answer characters sent

        def respond(request: Any) -> Reply:
            return replace(answer(request), delay=delay)

        super().__init__(respond)
        self.count = 0
        self.messages = 0  # summed over requests: the bench's same-size floor uses it
        self.recording = script is not None
        self.bodies: list[Any] = []  # every request body, when recording

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.count += 1
        try:
            payload = json.loads(await request.read())
            if self.recording:
                self.bodies.append(payload)
            if isinstance(payload, dict) and isinstance(payload.get("messages"), list):
                self.messages += len(payload["messages"])
            if isinstance(payload, dict) and payload.get("stream") and self.stream_s:
                return await self._write(request, payload)
            if isinstance(payload, dict) and payload.get("stream"):
                return await self._stream(request, payload)
            return await super()._handle(request)
        finally:
            self.requests.clear()  # a long run must not hold every request body

    async def _stream(self, request: web.Request, payload: dict[str, Any]) -> web.StreamResponse:
        reply = self.default(payload)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        body = reply.body
        choice = body["choices"][0]
        message = choice["message"]
        base = {k: body[k] for k in ("id", "created", "system_fingerprint")}
        base.update(object="chat.completion.chunk", model=payload.get("model", body["model"]))
        delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
        if message.get("tool_calls"):
            delta["tool_calls"] = [
                {"index": i, **call} for i, call in enumerate(message["tool_calls"])
            ]
        chunks = [
            {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {
                **base,
                "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}],
            },
        ]
        if (payload.get("stream_options") or {}).get("include_usage"):
            chunks.append({**base, "choices": [], "usage": body["usage"]})
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for chunk in chunks:
            await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    async def _write(self, request: web.Request, payload: dict[str, Any]) -> web.StreamResponse:
        """The echo and :data:`STREAMED_TAIL` as a model writes them (``--stream-s``)."""
        call = self.default(payload).body["choices"][0]["message"]["tool_calls"][0]
        echo = json.loads(call["function"]["arguments"])["answer"]
        reply = streamed_answer(echo + STREAMED_TAIL, seconds=self.stream_s)
        events = sse_events({**reply.body, "model": payload.get("model")}, reply)
        question, written = echo.removeprefix("echo: "), ""
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for number, event in enumerate(events):
            if number:
                await asyncio.sleep(reply.pace)
            for delta in (c["delta"] for c in event["choices"]):
                written += "".join(t["function"].get("arguments") or "" for t in
                                   delta.get("tool_calls") or ())  # fmt: skip
            if question not in self.first_tokens and written.partition(ANSWER_KEY)[2]:
                self.first_tokens[question] = time.monotonic()
            await resp.write(f"data: {json.dumps(event)}\n\n".encode())
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    async def _first_tokens(self, request: web.Request) -> web.Response:
        found, self.first_tokens = self.first_tokens, {}
        return web.json_response(found)

    async def _stats(self, request: web.Request) -> web.Response:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu_s = usage.ru_utime + usage.ru_stime
        return web.json_response(
            {"requests": self.count, "messages": self.messages, "cpu_s": cpu_s}
        )

    async def _bodies(self, request: web.Request) -> web.Response:
        return web.json_response(self.bodies)

    async def start(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_post("/chat/completions", self._handle)
        app.router.add_get("/bench/stats", self._stats)
        app.router.add_get("/bench/requests", self._bodies)
        app.router.add_get("/bench/first_tokens", self._first_tokens)
        self._runner = web.AppRunner(app, shutdown_timeout=0.1, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0, backlog=4096).start()
        self._port = int(self._runner.addresses[0][1])


async def _serve(delay: float, script: str | None, stream_s: float) -> None:
    fake = _CountingFake(delay, script, stream_s)
    await fake.start()
    print(f"PORT {fake._port}", flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # until the parent closes our stdin
    await fake.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--script", choices=sorted(SCRIPTS), default=None)
    parser.add_argument("--stream-s", type=float, default=0.0)
    args = parser.parse_args()
    asyncio.run(_serve(args.delay, args.script, args.stream_s))


if __name__ == "__main__":
    main()
