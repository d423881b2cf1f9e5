"""A request over the model's context window ("prompt is too long": a pasted log, a
token count that was off) was answered "unavailable right now, try again in a little
while" and its message kept, so every later request carried it and failed the same way
until /new. It is asked once more with older turns left out; a message too long even
then is refused as too long, not kept."""

from __future__ import annotations

import json
from typing import Any

from bot.messages import ChatKey
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.llm_server import FakeLLM, RecordedRequest, default_responder, error_reply

TOO_LONG = {
    "error": {
        "message": "This model's maximum context length is 4096 tokens. However, your "
        "messages resulted in 5120 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}


def _window(max_bytes: int) -> Any:
    """A model whose window holds requests of at most ``max_bytes``."""

    def answer(request: Any) -> Any:
        if len(json.dumps(request)) > max_bytes:
            return error_reply(400, TOO_LONG)
        return default_responder(request)

    return answer


def _sent(request: RecordedRequest) -> str:
    return json.dumps(request.json["messages"], ensure_ascii=False)


async def _baseline(chat: Any, fake: FakeLLM) -> int:
    """The size of a short turn's request: what the system prompt and tools take."""
    await chat.ask("hello")
    return len(json.dumps(fake.requests[-1].json))


async def test_older_turns_are_left_out_when_the_window_is_smaller(
    daemon_factory, fake_llm
) -> None:
    """The model's window is smaller than the bot counts: the refused request is sent
    again without the older turns, and the chat answers on."""
    _daemon, chat = await daemon_factory()
    base = await _baseline(chat, fake_llm)
    for n in range(2):
        await chat.ask(f"earlier {n}: " + "words " * 200)
    fake_llm.default = _window(base + 1_500)
    sent = len(fake_llm.requests)
    answered = await chat.ask("and now?")
    assert answered.text == "echo: and now?", answered.text
    retried = fake_llm.requests[sent:]
    assert len(retried) == 2 and "earlier 0" in _sent(retried[0])
    assert "earlier 0" not in _sent(retried[1]) and "and now?" in _sent(retried[1])


async def test_a_message_too_long_for_the_model_is_not_kept(daemon_factory, fake_llm) -> None:
    """Too long even alone: refused as too long (no "try again in a little while", no
    /new: the history is not the cause), not kept, and the next message is answered."""
    daemon, chat = await daemon_factory()
    base = await _baseline(chat, fake_llm)
    fake_llm.default = _window(base + 1_500)
    sent = len(fake_llm.requests)
    refused = await chat.ask("a pasted log: " + "line " * 1_000)
    assert "too long for this model" in refused.text and "not kept" in refused.text
    assert "a little while" not in refused.text and "/new" not in refused.text, refused.text
    assert len(fake_llm.requests) - sent == 2  # asked once more, shorter, then given up
    answered = await chat.ask("what's the weather like?")
    assert answered.text == "echo: what's the weather like?", answered.text
    assert "pasted log" not in _sent(fake_llm.requests[-1])
    stored = json.dumps(await daemon.sessions.history(ChatKey(chat.name, "c1")))
    assert "pasted log" not in stored


async def test_a_conversation_too_long_for_the_model_suggests_new(daemon_factory, fake_llm) -> None:
    """Still over the window with the turns the shorter request kept: the reply offers
    /new, after which the message is answered."""
    _daemon, chat = await daemon_factory()
    for n in range(10):
        await chat.ask(f"turn {n}: " + "words " * 250)

    def one_turn_only(request: Any) -> Any:
        users = [m for m in request["messages"] if m["role"] == "user"]
        return error_reply(400, TOO_LONG) if len(users) > 1 else default_responder(request)

    fake_llm.default = one_turn_only
    refused = await chat.ask("a question")
    assert "too long for this model" in refused.text and "/new" in refused.text, refused.text
    assert "turn 9" in _sent(fake_llm.requests[-1])  # the shorter request kept turns
    await chat.ask("/new")
    answered = await chat.ask("a question")
    assert answered.text == "echo: a question", answered.text


async def test_a_message_over_an_anthropic_window(daemon_factory) -> None:
    """Anthropic's wording of it ("input length and `max_tokens` exceed context limit"):
    the same reply, and the chat answers on."""
    async with FakeAnthropic() as fake:
        fake.windows["claude-sonnet-4-5"] = 64_000 + 5_000  # max_tokens is 64,000
        llm = {"model": "anthropic/claude-sonnet-4-5", "api_base": fake.root}
        _daemon, chat = await daemon_factory(llm=llm)
        refused = await chat.ask("HUGE paste of a log file: " + "line " * 2_500)
        assert "too long for this model" in refused.text, refused.text
        assert "a little while" not in refused.text and len(fake.rejected) == 2
        answered = await chat.ask("hi")
        assert answered.text == "echo: hi", answered.text
        assert "HUGE" not in json.dumps(fake.requests[-1])


async def test_a_model_the_server_does_not_have(daemon_factory, fake_llm) -> None:
    """A 404 (Ollama: "model not found, try pulling it first") is the bot's setup, not an
    outage: the reply names the setting and does not promise that waiting helps."""
    _daemon, chat = await daemon_factory(llm={"max_retries": 0})
    body = {"error": {"message": 'model "llava" not found, try pulling it first'}}
    fake_llm.default = lambda request: error_reply(404, body)
    failed = await chat.ask("hello")
    assert "a little while" not in failed.text, failed.text
    assert "llm.model" in failed.text and "waiting will not help" in failed.text
