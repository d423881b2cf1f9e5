"""The fake LLM server itself, over plain aiohttp (no litellm), so its failures are obvious."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest

from tests.fakes.llm_server import FakeLLM, Reply

FINAL = {"type": "function", "function": {"name": "final_result", "parameters": {}}}


async def post(fake: FakeLLM, body: Any, path: str = "/v1/chat/completions") -> tuple[int, Any]:
    url = fake.url.removesuffix("/v1") + path
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, data=json.dumps(body)) as resp,
    ):
        return resp.status, await resp.json(content_type=None)


def ask(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "fake-model", "messages": [{"role": "user", "content": text}], **extra}


async def test_default_echoes_plain_text(fake_llm: FakeLLM) -> None:
    status, body = await post(fake_llm, ask("hi"))
    assert status == 200
    assert body["object"] == "chat.completion"
    assert body["model"] == "fake-model"
    choice = body["choices"][0]
    assert choice["message"] == {"role": "assistant", "content": "echo: hi", "refusal": None}
    assert choice["finish_reason"] == "stop"
    assert body["usage"]["total_tokens"] == 15


async def test_default_calls_final_result_when_offered(fake_llm: FakeLLM) -> None:
    _, body = await post(fake_llm, ask("hi", tools=[FINAL]), path="/chat/completions")
    assert fake_llm.requests[0].path == "/chat/completions"
    call = body["choices"][0]["message"]["tool_calls"][0]
    assert call["type"] == "function"
    assert call["function"]["name"] == "final_result"
    assert json.loads(call["function"]["arguments"]) == {"answer": "echo: hi"}
    assert body["choices"][0]["finish_reason"] == "tool_calls"


async def test_queue_is_fifo_and_per_model_routes(fake_llm: FakeLLM) -> None:
    fake_llm.reply_text("first").reply_error(429)
    fake_llm.for_model("other").reply_text("for other")
    assert (await post(fake_llm, ask("x", model="other")))[1]["choices"][0]["message"][
        "content"
    ] == "for other"
    assert (await post(fake_llm, ask("x")))[1]["choices"][0]["message"]["content"] == "first"
    status, body = await post(fake_llm, ask("x"))
    assert status == 429
    assert body["error"]["code"] == "rate_limit_exceeded"
    assert fake_llm.models() == ["other", "fake-model", "fake-model"]


async def test_tool_call_shapes(fake_llm: FakeLLM) -> None:
    fake_llm.reply_tool_calls([("a", {"x": 1}), (None, "{broken")])
    _, body = await post(fake_llm, ask("x"))
    first, second = body["choices"][0]["message"]["tool_calls"]
    assert first["function"] == {"name": "a", "arguments": '{"x": 1}'}
    assert second["function"] == {"arguments": "{broken"}
    assert first["id"] != second["id"]


async def test_bad_json_is_rejected(fake_llm: FakeLLM) -> None:
    assert (await post(fake_llm, "not an object"))[0] == 400


async def test_a_streamed_reply_is_the_same_answer_in_sse_events() -> None:
    from tests.fakes.llm_server import sse_events, text_reply

    reply = text_reply("hello world")
    events = sse_events(reply.body, reply)
    deltas = [e["choices"][0]["delta"].get("content", "") for e in events if e["choices"]]
    assert "".join(deltas) == "hello world"
    assert events[-1]["usage"]["total_tokens"] > 0


async def test_custom_default_and_no_choices(fake_llm: FakeLLM) -> None:
    fake_llm.default = lambda request: Reply(status=503, body={"error": {"message": "down"}})
    fake_llm.reply_no_choices()
    assert (await post(fake_llm, ask("x")))[1]["choices"] == []
    assert (await post(fake_llm, ask("x")))[0] == 503


async def test_wait_requests(fake_llm: FakeLLM) -> None:
    waiter = asyncio.create_task(fake_llm.wait_requests(2, timeout=2))
    await post(fake_llm, ask("a"))
    assert not waiter.done()
    await post(fake_llm, ask("b"))
    requests = await waiter
    assert [r.json["messages"][0]["content"] for r in requests] == ["a", "b"]
    with pytest.raises(TimeoutError):
        await fake_llm.wait_requests(3, timeout=0.05)
