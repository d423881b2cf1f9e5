"""What requests carry besides the messages: the answer's cap (max_tokens).

Claude's API requires max_tokens; left to litellm it was the model's whole output limit,
or 128,000 for a Claude name litellm's map lacks, which the API refuses for a model
allowed fewer: every message then failed."""

from __future__ import annotations

import pytest

from tests.fakes.anthropic_api import FakeAnthropic


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
