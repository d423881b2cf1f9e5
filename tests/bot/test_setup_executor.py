"""litellm's request set-up without a thread hop, and only where that is safe.

The loop's default executor runs a job on the loop's own thread only inside
``setup_inline(True)`` and only when the job is litellm's set-up; everything else (DNS
lookups, ``asyncio.to_thread``, a provider whose set-up may block) keeps a worker thread.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import pytest

from bot.agent.llm import setup_executor
from bot.agent.llm.client import LLMClient, litellm_module
from bot.agent.llm.setup_executor import (
    PURE_SETUP_PROVIDERS,
    LoopExecutor,
    is_litellm_setup,
    provider_of,
    setup_inline,
)
from tests.fakes.llm_server import FakeLLM


@pytest.fixture
async def litellm_setup(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A stand-in for ``litellm.main.completion`` that records its thread; the job is
    submitted in litellm's own shape, as ``acompletion`` submits it."""
    litellm = await litellm_module()
    ran_on: list[int] = []

    def completion(**kwargs: Any) -> str:
        ran_on.append(threading.get_ident())
        if kwargs.get("fail"):
            raise ValueError("bad request")
        return "init"

    monkeypatch.setattr(litellm.main, "completion", completion)

    async def run(**kwargs: Any) -> tuple[str, int]:
        job = partial(contextvars.copy_context().run, partial(completion, **kwargs))
        result = await asyncio.get_running_loop().run_in_executor(None, job)
        return result, ran_on[-1]

    return run


async def test_the_set_up_runs_on_the_loop_thread_only_when_asked(litellm_setup: Any) -> None:
    executor = setup_executor.install()
    loop_thread = threading.get_ident()
    with setup_inline(True):
        assert await litellm_setup() == ("init", loop_thread)
    assert executor.inline_runs == 1
    result, thread = await litellm_setup()  # outside setup_inline: as asyncio does it
    assert (result, executor.inline_runs) == ("init", 1)
    assert thread != loop_thread
    with setup_inline(False):  # a provider whose set-up may block
        assert (await litellm_setup())[1] != loop_thread


async def test_an_error_in_the_set_up_reaches_the_caller(litellm_setup: Any) -> None:
    setup_executor.install()
    with setup_inline(True), pytest.raises(ValueError, match="bad request"):
        await litellm_setup(fail=True)


async def test_other_jobs_keep_a_worker_thread_inside_a_model_call() -> None:
    """DNS lookups and to_thread made while a model call is in flight never block the loop."""
    executor = setup_executor.install()
    loop_thread = threading.get_ident()
    with setup_inline(True):
        assert await asyncio.to_thread(threading.get_ident) != loop_thread
        loop = asyncio.get_running_loop()
        assert await loop.run_in_executor(None, threading.get_ident) != loop_thread
        assert await loop.getaddrinfo("127.0.0.1", 80)
    assert executor.inline_runs == 0
    assert not is_litellm_setup(partial(contextvars.copy_context().run, threading.get_ident))


async def test_install_once_per_loop_and_let_an_earlier_executor_go() -> None:
    loop = asyncio.get_running_loop()
    earlier = ThreadPoolExecutor(max_workers=1)
    loop.set_default_executor(earlier)
    first = setup_executor.install()
    assert setup_executor.install() is first
    assert isinstance(first, LoopExecutor)
    with pytest.raises(RuntimeError):  # shut down: it takes no more work
        earlier.submit(print)


async def test_only_api_key_providers_count_as_pure() -> None:
    litellm = await litellm_module()
    assert provider_of(litellm, "openai/fake-model") in PURE_SETUP_PROVIDERS
    assert provider_of(litellm, "anthropic/claude-3-5-haiku-latest") in PURE_SETUP_PROVIDERS
    for model in ("bedrock/anthropic.claude-3-haiku", "vertex_ai/gemini-1.5-pro", "azure/gpt"):
        assert provider_of(litellm, model) not in PURE_SETUP_PROVIDERS, model
    assert provider_of(litellm, "no-such-provider/model") == ""


async def test_a_real_call_through_litellm_skips_the_hop(fake_llm: FakeLLM) -> None:
    """The shape check against the installed litellm: if a release wraps its set-up
    differently, this fails (and calls quietly go back to a worker thread)."""
    LLMClient.prepare_loop()
    executor = setup_executor.install()
    llm = LLMClient("openai/fake-model", api_base=fake_llm.url, api_key="sk-test", max_retries=0)
    fake_llm.reply_text("hi")
    assert (await llm.complete([{"role": "user", "content": "hello"}], None)).content == "hi"
    assert executor.inline_runs == 1


async def test_the_daemons_turns_skip_the_hop(daemon_factory: Any) -> None:
    _, chat = await daemon_factory()
    assert (await chat.ask("hello")).text == "echo: hello"
    executor = setup_executor.install()  # the one the daemon installed at start
    assert executor.inline_runs >= 1
