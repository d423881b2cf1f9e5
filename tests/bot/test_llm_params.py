"""What requests carry besides the messages: the answer's cap (max_tokens) and, for
Claude, where the prompt cache ends.

Claude's API requires max_tokens; left to litellm it was the model's whole output limit,
or 128,000 for a Claude name litellm's map lacks, which the API refuses for a model
allowed fewer: every message then failed. And Anthropic caches nothing that no
cache_control marks: every request was billed whole."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.anthropic_api import FakeAnthropic, cache_marks, tool_use


@pytest.mark.parametrize(
    ("model", "sent"),
    [
        ("claude-3-7-sonnet-latest", 8_192),  # not in litellm's map: a safe default
        ("claude-sonnet-4-5", 64_000),  # litellm's figure for it
    ],
)
async def test_claude_gets_a_cap_it_accepts(daemon_factory, model: str, sent: int) -> None:
    async with FakeAnthropic() as fake:
        fake.output_limits[model] = 64_000
        _daemon, chat = await daemon_factory(
            llm={"model": f"anthropic/{model}", "api_base": fake.root}
        )
        answered = await chat.ask("hi")
        assert answered.text == "echo: hi", answered.text
        assert [r["max_tokens"] for r in fake.requests] == [sent]


async def test_the_configured_cap_goes_to_claude(daemon_factory) -> None:
    async with FakeAnthropic() as fake:
        llm = {"model": "anthropic/claude-sonnet-4-5", "api_base": fake.root}
        _daemon, chat = await daemon_factory(llm={**llm, "max_output_tokens": 1_000})
        assert (await chat.ask("hi")).text == "echo: hi"
        assert fake.requests[-1]["max_tokens"] == 1_000


async def test_the_configured_cap_goes_to_other_providers(daemon_factory, fake_llm) -> None:
    _daemon, chat = await daemon_factory(llm={"max_output_tokens": 1_000})
    assert (await chat.ask("hi")).text == "echo: hi"
    assert fake_llm.requests[-1].json["max_tokens"] == 1_000


async def test_other_providers_get_no_cap_by_default(daemon_factory, fake_llm) -> None:
    """An OpenAI-compatible server (vLLM with a small window) may refuse a cap it cannot
    hold: without the setting none is sent, as before."""
    _daemon, chat = await daemon_factory()
    assert (await chat.ask("hi")).text == "echo: hi"
    assert "max_tokens" not in fake_llm.requests[-1].json


def _marked(block: Any) -> bool:
    return isinstance(block, dict) and "cache_control" in block


async def test_claude_requests_mark_where_the_prompt_cache_ends(daemon_factory) -> None:
    """Anthropic caches a prefix only up to a block marked with cache_control: the tools,
    the system message and the last message are marked (three of the four allowed), so
    the next request, which repeats this one up to its last message, reads it cached."""
    async with FakeAnthropic() as fake:
        llm = {"model": "anthropic/claude-sonnet-4-5", "api_base": fake.root}
        _daemon, chat = await daemon_factory(llm=llm)
        await chat.ask("hi")
        fake.reply(tool_use("list_reminders", {}))  # a step: the last message a tool result
        await chat.ask("what are my reminders?")
        await chat.ask("and again")
    assert len(fake.requests) == 4 and fake.rejected == []
    assert fake.requests[2]["messages"][-1]["content"][-1]["type"] == "tool_result"
    for body in fake.requests:
        assert cache_marks(body) == 3, body
        assert _marked(body["tools"][-1]) and _marked(body["system"][-1])
        last = body["messages"][-1]["content"]
        assert isinstance(last, list) and _marked(last[-1])
        assert not any(_marked(t) for t in body["tools"][:-1])


async def test_other_providers_requests_carry_no_cache_marks(daemon_factory, fake_llm) -> None:
    """Only Claude's requests change: an OpenAI-compatible request is sent as before."""
    _daemon, chat = await daemon_factory()
    await chat.ask("hi")
    await chat.ask("and again")
    for request in fake_llm.requests:
        assert b"cache_control" not in request.body
