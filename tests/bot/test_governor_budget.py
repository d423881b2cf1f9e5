"""The token budget: the model's real window, the configured fallback, offline counting."""

from __future__ import annotations

import socket
from typing import Any

import litellm
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.agent.governor.budget import (
    Budget,
    TokenCounter,
    UpperBound,
    estimate_tokens,
    litellm_counter,
    model_window,
    resolve_budget,
    utf8_upper_bound,
)
from bot.agent.governor.pipeline import ContextGovernor
from bot.config import ContextSettings, Settings


@pytest.fixture(autouse=True)
def _litellm_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference counts below are litellm's, its counter on: a daemon built earlier
    in this process turned it off for litellm's pricing (bot/agent/llm/loader.py)."""
    monkeypatch.setattr(litellm, "disable_token_counter", False)


def test_the_governor_counts_while_litellm_counts_nothing_for_pricing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "hello world, how are you today?"
    exact = litellm.token_counter(model="openai/fake-model", text=text)
    monkeypatch.setattr(litellm, "disable_token_counter", True)  # as the daemon runs
    assert litellm.token_counter(model="openai/fake-model", text=text) == 0
    assert litellm_counter(litellm, "openai/fake-model").text(text) == exact > 0
    assert litellm.disable_token_counter is True  # on again for litellm's own use


def test_known_model_uses_its_real_window():
    budget = resolve_budget(
        litellm, "openai/gpt-4o-mini", max_context_tokens=32_000, reserve_tokens=4_000
    )
    assert budget == Budget(128_000, 4_000, "model")
    assert budget.limit == 124_000


@pytest.mark.parametrize("model", ["openai/fake-model", "my-self-hosted/thing", "", None])
def test_unknown_model_falls_back_to_the_configured_window(model):
    assert model_window(litellm, model) is None  # get_model_info raises for these
    budget = resolve_budget(litellm, model, max_context_tokens=9_000, reserve_tokens=1_000)
    assert budget == Budget(9_000, 1_000, "config")
    assert budget.limit == 8_000


def test_reserve_never_eats_more_than_half_the_window():
    assert Budget(4_000, 10_000, "config").limit == 2_000


def test_context_settings_defaults_and_toml_keys():
    ctx = Settings().context
    assert (ctx.max_context_tokens, ctx.reserve_tokens) == (32_000, 4_000)
    assert (ctx.max_tool_result_chars, ctx.history_turns) == (16_000, 6)


def test_counting_works_offline(monkeypatch):
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    text = "hello world, how are you today?"
    for model in ("openai/gpt-4o-mini", "openai/fake-model", "ollama/llama3"):
        exact = litellm.token_counter(model=model, text=text)
        assert 0 < exact < estimate_tokens(text)
        assert litellm_counter(litellm, model).text(text) == exact


def test_counts_are_cached_per_string():
    calls: list[str] = []

    def count(text: str) -> int:
        calls.append(text)
        return len(text)

    counter = TokenCounter(count)
    msg = {"role": "user", "content": "x" * 1000}
    first = counter.message(msg)
    assert counter.message(dict(msg)) == first
    assert counter.message({"role": "assistant", "content": "x" * 1000}) == first
    assert calls == ["x" * 1000]


def test_a_failing_tokenizer_falls_back_to_the_estimate():
    def broken(text: str) -> int:
        raise RuntimeError("no tokenizer")

    assert TokenCounter(broken).text("abcdef") == estimate_tokens("abcdef")


def test_tool_calls_and_definitions_count():
    counter = TokenCounter()
    bare = counter.message({"role": "assistant", "content": None})
    args = '{"city": "Paris"}' * 20
    called = counter.message(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "a", "function": {"name": "get_weather", "arguments": args}}],
        }
    )
    assert called > bare + estimate_tokens(args) - 1
    assert counter.tools([{"function": {"name": "x"}}]) > 0
    assert counter.tools(None) == 0


async def test_governor_resolves_window_and_tokenizer_lazily():
    gov = ContextGovernor(ContextSettings(max_context_tokens=5_000), "openai/fake-model")
    assert gov.budget is None
    await gov.ready()
    assert gov.budget == Budget(5_000, 4_000, "config")
    assert gov.budget.limit == 2_500
    text = "hello world, how are you today?"
    estimate = gov.counter
    small = [{"role": "user", "content": text}]
    await gov.prepare(small)
    assert gov.counter is estimate  # fits by length: the tokenizer is not even loaded
    big = [{"role": "user", "content": f"{i} {text}"} for i in range(200)]
    governed = await gov.prepare(big)
    assert gov.counter.text(text) == litellm.token_counter(model="openai/fake-model", text=text)
    assert governed.dropped > 0 and governed.tokens <= 2_500
    known = ContextGovernor(ContextSettings(), "openai/gpt-4o-mini")
    await known.ready()
    assert known.budget is not None and known.budget.window == 128_000


@pytest.mark.parametrize(
    ("model", "max_output_tokens", "reserve"),
    [
        ("anthropic/claude-sonnet-4-5", 0, 64_000),  # the max_tokens litellm's map gives
        ("anthropic/claude-3-7-sonnet-latest", 0, 8_192),  # not in the map
        ("openai/gpt-4o-mini", 0, 4_000),  # no cap sent: [context] reserve_tokens
        ("openai/gpt-4o-mini", 10_000, 10_000),
        ("openai/gpt-4o-mini", 1_000, 4_000),
    ],
)
async def test_the_answer_s_max_tokens_stay_free(model, max_output_tokens, reserve):
    """A provider refuses a prompt and max_tokens together over the window: the governor
    keeps the max_tokens sent free, when that is more than reserve_tokens."""
    gov = ContextGovernor(ContextSettings(), model, max_output_tokens=max_output_tokens)
    await gov.ready()
    assert gov.budget is not None and gov.budget.reserve == reserve
    assert gov.budget.limit == gov.budget.window - reserve


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "openai/fake-model", "gpt-4o"])
def test_the_length_bound_is_never_below_the_tokenizer(model):
    counter = litellm_counter(litellm, model)
    texts = ["", "hi", "a" * 500, "ünïcödé " * 40, "日本語のテキスト" * 30, "🙂🚀" * 50, "\x00\n\t"]
    for text in texts:
        assert utf8_upper_bound(text) >= counter.text(text)


def test_a_request_that_fits_by_length_is_never_tokenized():
    counted: list[str] = []

    def tokenizer(text: str) -> int:
        counted.append(text)
        return len(text)

    settings = ContextSettings(max_context_tokens=100_000, reserve_tokens=0)
    budget = Budget(100_000, 0, "config")
    gov = ContextGovernor(settings, counter=TokenCounter(tokenizer), budget=budget)
    msgs = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hello " * 100}]
    governed = gov.prepare_for_model(msgs)
    assert counted == []  # the bound proved it fits: no tokenizer call
    assert governed.messages == msgs and governed.tokens >= 600
    # Sent as given, so its bound bounds every message (the fold check reuses it).
    assert governed.untouched and governed.tokens == gov.upper.messages(msgs)
    orphan = {"role": "tool", "tool_call_id": "call_gone", "content": "late"}
    repaired = gov.prepare_for_model([msgs[0], orphan, msgs[1]])
    assert repaired.bounded and not repaired.untouched

    # Over the bound: counted exactly, and snipped to the window.
    small = Budget(1_000, 0, "config")
    gov = ContextGovernor(settings, counter=TokenCounter(tokenizer), budget=small)
    history = [{"role": "user", "content": f"q{i} " + "x" * 300} for i in range(10)]
    governed = gov.prepare_for_model([msgs[0], *history, msgs[1]])
    assert counted and governed.dropped > 0 and governed.tokens <= 1_000


_CALL = st.fixed_dictionaries(
    {"id": st.text(max_size=8), "type": st.just("function")},
    optional={
        "function": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {},
                optional={
                    "name": st.one_of(st.text(max_size=12), st.integers()),
                    "arguments": st.one_of(st.text(), st.none()),
                },
            ),
        )
    },
)


@settings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant", "tool"]),
            "content": st.one_of(
                st.text(), st.none(), st.lists(st.fixed_dictionaries({"text": st.text()}))
            ),
        },
        optional={
            "name": st.text(max_size=8),
            "tool_call_id": st.text(max_size=8),
            "tool_calls": st.one_of(st.lists(_CALL, max_size=3), st.text(max_size=3)),
        },
    )
)
def test_the_bounds_inline_count_is_the_general_one(message: dict[str, Any]) -> None:
    """The bound counts every message of every request with plain functions (plain text
    messages inline): the same number the general count, through its cache, gives."""
    assert UpperBound().message(message) == TokenCounter(utf8_upper_bound).message(message)
