"""LLMClient against the real litellm talking HTTP to the fake OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bot.agent.llm import client as llm_module
from bot.agent.llm.client import LLMClient, LLMResponse
from bot.errors import ModelNotConfiguredError, ModelUnavailableError
from tests.fakes.llm_server import FakeLLM

KEY = "sk-test"
MODEL = "openai/fake-model"
FALLBACK = "openai/fake-fallback"
USER = [{"role": "user", "content": "hello"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def client(fake: FakeLLM, **kw: Any) -> LLMClient:
    options: dict[str, Any] = {
        "api_base": fake.url,
        "api_key": KEY,
        "timeout_s": 5,
        "max_retries": 2,
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.05,
    }
    options.update(kw)
    return LLMClient(options.pop("model", MODEL), **options)


async def test_plain_text(fake_llm: FakeLLM) -> None:
    fake_llm.reply_text("hi there")
    resp = await client(fake_llm).complete(USER, None)
    assert resp == LLMResponse(
        content="hi there",
        tool_calls=(),
        model=MODEL,
        finish_reason="stop",
        usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    )
    (req,) = fake_llm.requests
    assert req.json["model"] == "fake-model"
    assert req.json["messages"] == USER
    assert "tools" not in req.json
    assert req.headers["Authorization"] == f"Bearer {KEY}"


async def test_several_tool_calls_parsed_raw(fake_llm: FakeLLM) -> None:
    fake_llm.reply_tool_calls(
        [
            ("get_weather", {"city": "Paris"}),
            ("get_weather", '{"city": "Ro'),
            (None, "{}"),
        ],
        content="checking",
    )
    resp = await client(fake_llm).complete(USER, TOOLS)
    assert resp.content == "checking"
    assert resp.finish_reason == "tool_calls"
    assert [(c.name, c.arguments) for c in resp.tool_calls] == [
        ("get_weather", '{"city": "Paris"}'),
        ("get_weather", '{"city": "Ro'),
        (None, "{}"),
    ]
    ids = [c.id for c in resp.tool_calls]
    assert len(set(ids)) == 3
    assert all(ids)
    assert fake_llm.requests[0].json["tools"] == TOOLS


async def test_500_then_success_is_retried_and_logged(
    fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    fake_llm.reply_error(500)
    fake_llm.reply_text("ok")
    with caplog.at_level(logging.WARNING, logger="bot.agent.llm.client"):
        resp = await client(fake_llm).complete(USER, None)
    assert resp.content == "ok"
    assert len(fake_llm.requests) == 2
    (record,) = [r for r in caplog.records if r.name == "bot.agent.llm.client"]
    message = record.getMessage()
    assert MODEL in message
    assert "server error (HTTP 500)" in message
    assert "attempt=1/3" in message
    assert KEY not in message


@pytest.mark.parametrize("status", [502, 503])
async def test_other_5xx_retried(fake_llm: FakeLLM, status: int) -> None:
    fake_llm.reply_error(status)
    fake_llm.reply_text("ok")
    assert (await client(fake_llm).complete(USER, None)).content == "ok"
    assert len(fake_llm.requests) == 2


async def test_429_then_success(fake_llm: FakeLLM) -> None:
    fake_llm.reply_error(429)
    fake_llm.reply_text("ok")
    assert (await client(fake_llm).complete(USER, None)).content == "ok"
    assert len(fake_llm.requests) == 2


async def test_429_retry_after_is_honoured_up_to_the_cap(fake_llm: FakeLLM) -> None:
    fake_llm.reply_error(429, headers={"Retry-After": "0.4"})
    fake_llm.reply_text("ok")
    start = time.monotonic()
    resp = await client(fake_llm, backoff_max_s=1.0).complete(USER, None)
    assert resp.content == "ok"
    assert time.monotonic() - start >= 0.4


async def test_a_retry_after_past_the_backoff_cap_is_waited_out(fake_llm: FakeLLM) -> None:
    """Retry-After is honoured up to the request timeout (a per-minute limit's 20 s
    against the default 60 s), not cut to the backoff cap: scaled down here."""
    fake_llm.reply_error(429, headers={"Retry-After": "0.6"})
    fake_llm.reply_text("ok")
    start = time.monotonic()
    resp = await client(fake_llm, timeout_s=1.0, backoff_max_s=0.05).complete(USER, None)
    assert resp.content == "ok"
    assert time.monotonic() - start >= 0.6
    assert len(fake_llm.requests) == 2


async def test_a_retry_after_past_the_timeout_moves_to_the_fallback_at_once(
    fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    for _ in range(3):
        fake_llm.for_model("fake-model").reply_error(429, headers={"Retry-After": "30"})
    llm = client(fake_llm, timeout_s=1.0, fallback_models=[FALLBACK])
    start = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="bot.agent.llm.client"):
        resp = await llm.complete(USER, None)
    assert resp.content == "echo: hello"
    assert fake_llm.models() == ["fake-model", "fake-fallback"]
    assert time.monotonic() - start < 1.0
    assert "not retried: Retry-After 30 s" in caplog.text


async def test_a_retry_after_past_the_timeout_without_a_fallback_fails_at_once(
    fake_llm: FakeLLM,
) -> None:
    for _ in range(3):
        fake_llm.reply_error(429, headers={"Retry-After": "30"})
    start = time.monotonic()
    with pytest.raises(ModelUnavailableError, match="rate limited"):
        await client(fake_llm, timeout_s=1.0).complete(USER, None)
    assert len(fake_llm.requests) == 1
    assert time.monotonic() - start < 1.0


async def test_timeout_then_success(fake_llm: FakeLLM) -> None:
    fake_llm.reply_text("too late", delay=2.0)
    fake_llm.reply_text("ok")
    start = time.monotonic()
    resp = await client(fake_llm, timeout_s=0.5).complete(USER, None)
    assert resp.content == "ok"
    assert len(fake_llm.requests) == 2
    assert time.monotonic() - start < 1.8


async def test_cancellation_is_not_retried(fake_llm: FakeLLM) -> None:
    fake_llm.reply_text("slow", delay=2.0)
    task = asyncio.create_task(client(fake_llm).complete(USER, None))
    await fake_llm.wait_requests(1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(fake_llm.requests) == 1


async def test_no_choices_then_success(fake_llm: FakeLLM) -> None:
    fake_llm.reply_no_choices()
    fake_llm.reply_text("ok")
    assert (await client(fake_llm).complete(USER, None)).content == "ok"
    assert len(fake_llm.requests) == 2


async def test_garbage_body_then_success(fake_llm: FakeLLM) -> None:
    fake_llm.reply_raw(200, "this is not json")
    fake_llm.reply_text("ok")
    assert (await client(fake_llm).complete(USER, None)).content == "ok"
    assert len(fake_llm.requests) == 2


async def test_all_attempts_fail(fake_llm: FakeLLM) -> None:
    for _ in range(3):
        fake_llm.reply_error(500)
    with pytest.raises(ModelUnavailableError) as info:
        await client(fake_llm, max_retries=2).complete(USER, None)
    assert len(fake_llm.requests) == 3
    message = str(info.value)
    assert "\n" not in message
    assert "server error" in message
    assert MODEL in message


async def test_fallback_used_after_primary_fails(fake_llm: FakeLLM) -> None:
    for _ in range(2):
        fake_llm.for_model("fake-model").reply_error(503)
    fake_llm.for_model("fake-fallback").reply_text("from fallback")
    resp = await client(fake_llm, max_retries=1, fallback_models=[FALLBACK]).complete(USER, None)
    assert resp.content == "from fallback"
    assert resp.model == FALLBACK
    assert fake_llm.models() == ["fake-model", "fake-model", "fake-fallback"]


async def test_every_model_fails(fake_llm: FakeLLM) -> None:
    fake_llm.for_model("fake-model").reply_error(500).reply_error(500)
    fake_llm.for_model("fake-fallback").reply_error(429).reply_error(429)
    with pytest.raises(ModelUnavailableError) as info:
        await client(fake_llm, max_retries=1, fallback_models=[FALLBACK]).complete(USER, None)
    assert fake_llm.models() == ["fake-model"] * 2 + ["fake-fallback"] * 2
    assert "rate limited" in str(info.value)
    assert FALLBACK in str(info.value)


async def test_401_is_not_configured_without_retries(fake_llm: FakeLLM) -> None:
    fake_llm.reply_error(401)
    with pytest.raises(ModelNotConfiguredError) as info:
        await client(fake_llm, fallback_models=[FALLBACK]).complete(USER, None)
    assert len(fake_llm.requests) == 1
    message = str(info.value)
    for hint in ("llm.api_key", "BOT_LLM__API_KEY", "BOT_LLM__MODEL", "OPENAI_API_KEY"):
        assert hint in message
    assert KEY not in message


async def test_missing_key_fails_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    litellm = llm_module._loader.load()

    async def no_network(**_: Any) -> Any:
        raise AssertionError("acompletion must not be called")

    monkeypatch.setattr(litellm, "acompletion", no_network)
    with pytest.raises(ModelNotConfiguredError) as info:
        await LLMClient("openai/gpt-4o-mini").complete(USER, None)
    message = str(info.value)
    for hint in ("OPENAI_API_KEY", "llm.api_key", "BOT_LLM__API_KEY", "BOT_LLM__API_BASE"):
        assert hint in message


async def test_api_base_without_key_fails_before_any_request(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelNotConfiguredError, match="placeholder"):
        await client(fake_llm, api_key="").complete(USER, None)
    assert fake_llm.requests == []


async def test_connection_refused_is_retried(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    llm = LLMClient(
        MODEL,
        api_base=f"http://127.0.0.1:{port}/v1",
        api_key=KEY,
        max_retries=1,
        backoff_base_s=0.01,
    )
    with (
        caplog.at_level(logging.WARNING, logger="bot.agent.llm.client"),
        pytest.raises(ModelUnavailableError, match="connection error"),
    ):
        await llm.complete(USER, None)
    assert len([r for r in caplog.records if r.name == "bot.agent.llm.client"]) == 2


async def test_unknown_provider_is_not_configured(fake_llm: FakeLLM) -> None:
    with pytest.raises(ModelNotConfiguredError, match="provider"):
        await client(fake_llm, model="no-such-model-xyz").complete(USER, None)
    assert fake_llm.requests == []


@pytest.mark.parametrize(("status", "kind"), [(400, "bad request"), (404, "not found")])
async def test_client_errors_are_not_retried(fake_llm: FakeLLM, status: int, kind: str) -> None:
    fake_llm.reply_error(status)
    with pytest.raises(ModelUnavailableError, match=kind):
        await client(fake_llm).complete(USER, None)
    assert len(fake_llm.requests) == 1


async def test_client_error_moves_on_to_the_fallback(fake_llm: FakeLLM) -> None:
    fake_llm.for_model("fake-model").reply_error(400)
    resp = await client(fake_llm, fallback_models=[FALLBACK]).complete(USER, None)
    assert resp.content == "echo: hello"
    assert fake_llm.models() == ["fake-model", "fake-fallback"]


async def test_warmup_returns_at_once_and_sets_offline_env() -> None:
    loader = llm_module._Loader()
    start = time.monotonic()
    loader.start()
    assert time.monotonic() - start < 0.2
    module = await loader.aload()
    assert loader.loaded
    assert module.suppress_debug_info is True
    assert module.drop_params is True
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"].lower() == "true"
    # What the import built is out of later collections (each walked ~400,000 objects).
    assert gc.get_freeze_count() > 100_000


@pytest.mark.slow
def test_the_daemons_litellm_makes_no_logging_copy_of_the_messages() -> None:
    """An LLMClient made before the import turns off litellm's per-call copy of the
    messages for logging callbacks (the daemon registers none): the copy returned is
    the very list sent. The setting is not left in the environment for children."""
    code = (
        "import os\n"
        "from bot.agent.llm.client import LLMClient, _loader\n"
        "LLMClient('openai/fake-model')\n"
        "_loader.load()\n"
        "from litellm.litellm_core_utils.logging_utils import truncate_base64_in_messages\n"
        "m = [{'role': 'user', 'content': 'data:image/png;base64,' + 'A' * 500}]\n"
        "print(truncate_base64_in_messages(m) is m, 'MAX_BASE64_LENGTH_FOR_LOGGING' in os.environ)"
    )
    assert _python(code, timeout=60) == "True False"


@pytest.mark.slow
def test_only_the_daemons_litellm_import_widens_the_young_generation() -> None:
    """A bare import (the bench's floor) leaves Python's collector as it is; the daemon's
    (an LLMClient made first) collects the young generation every 50,000 allocations."""
    code = (
        "import gc\n"
        "from bot.agent.llm import loader\n"
        "default = gc.get_threshold()\n"
        "loader.LitellmLoader().load()\n"
        "bare = gc.get_threshold()\n"
        "daemons = loader.LitellmLoader()\n"
        "daemons.economy = True\n"
        "daemons.load()\n"
        "print(bare == default, gc.get_threshold() == (50_000, *default[1:]))"
    )
    assert _python(code, timeout=60) == "True True"


def test_the_economy_env_is_there_for_the_import_only_and_an_operators_value_wins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from bot.agent.llm import loader

    # A bare import (the bench's floor) gets only the offline settings.
    assert not set(loader.LITELLM_ECONOMY_ENV) & set(loader.LITELLM_ENV)
    key = "MAX_BASE64_LENGTH_FOR_LOGGING"
    monkeypatch.delenv(key, raising=False)
    with loader.import_env(loader.LITELLM_ECONOMY_ENV):
        assert os.environ[key] == "0"
    assert key not in os.environ
    monkeypatch.setenv(key, "64")
    with loader.import_env(loader.LITELLM_ECONOMY_ENV):
        assert os.environ[key] == "64"
    assert os.environ[key] == "64"
    monkeypatch.setattr(loader.loader, "economy", False)
    LLMClient(MODEL)
    assert loader.loader.economy


def test_importing_the_module_does_not_import_litellm() -> None:
    code = "import bot.agent.llm.client, sys; print('litellm' in sys.modules)"
    assert _python(code, timeout=30) == "False"


def _python(code: str, *, timeout: float) -> str:
    """What a fresh interpreter in the project's root prints for ``code``."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
        timeout=timeout,
    )
    return out.stdout.strip()


class _InFlight(FakeLLM):
    """Counts the requests it is answering at once."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0
        self.peak = 0

    async def _handle(self, request: Any) -> Any:
        self.now += 1
        self.peak = max(self.peak, self.now)
        try:
            return await super()._handle(request)
        finally:
            self.now -= 1


async def test_requests_in_flight_are_capped_and_the_rest_wait() -> None:
    async with _InFlight() as fake:
        for i in range(6):
            fake.reply_text(f"answer {i}", delay=0.2)
        llm = client(fake, max_concurrent_calls=2)
        replies = await asyncio.gather(*(llm.complete(USER, None) for _ in range(6)))
    assert sorted(r.content or "" for r in replies) == [f"answer {i}" for i in range(6)]
    assert fake.peak == 2  # never more than the cap at the provider; none failed


def test_defaults_cap_model_calls_not_chats() -> None:
    from bot.config import Settings

    defaults = Settings()
    assert defaults.llm.max_concurrent_calls == 0  # by provider
    assert defaults.agent.max_concurrent_chats >= 1_000  # a 1,000-chat burst is not held back
    # A hosted API gets as many calls as litellm keeps connections per host: more would
    # wait inside litellm's pool, timeouts running, with a warning logged for each.
    from litellm.constants import AIOHTTP_CONNECTOR_LIMIT_PER_HOST

    assert LLMClient(defaults.llm.model).max_concurrent_calls == AIOHTTP_CONNECTOR_LIMIT_PER_HOST


@pytest.mark.parametrize(
    ("value", "cap"), [("100", 100), ("0", 1024), ("-1", 1024), ("many", 500), ("", 500)]
)
def test_the_hosted_default_follows_litellms_pool_setting(
    monkeypatch: pytest.MonkeyPatch, value: str, cap: int
) -> None:
    monkeypatch.setenv("AIOHTTP_CONNECTOR_LIMIT_PER_HOST", value)  # litellm reads it too
    assert LLMClient("openai/gpt-4o-mini").max_concurrent_calls == cap
    assert LLMClient("ollama/llama3").max_concurrent_calls == 4


@pytest.mark.parametrize(
    ("model", "cap"),
    [
        ("openai/gpt-4o-mini", 500),
        ("anthropic/claude-3-5-haiku-latest", 500),
        ("gpt-4o-mini", 500),
        ("ollama/llama3", 4),
        ("ollama_chat/llama3", 4),
        ("lm_studio/qwen2.5-7b", 4),
        ("llamafile/mistral", 4),
        ("openrouter/ollama/llama3", 500),  # a hosted router, whatever it routes to
    ],
)
def test_the_default_cap_follows_the_provider(model: str, cap: int) -> None:
    assert LLMClient(model).max_concurrent_calls == cap
    assert LLMClient(model, max_concurrent_calls=32).max_concurrent_calls == 32  # config wins


class _FakeOllama:
    """Ollama's /api/chat on 127.0.0.1, answering after a pause; counts requests at once."""

    def __init__(self) -> None:
        self.now = self.peak = self.served = 0
        self._runner: Any = None
        self.url = ""

    async def __aenter__(self) -> _FakeOllama:
        from aiohttp import web

        app = web.Application()
        app.router.add_post("/api/chat", self._chat)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *_: object) -> None:
        await self._runner.cleanup()

    async def _chat(self, request: Any) -> Any:
        from aiohttp import web

        body = await request.json()
        self.now += 1
        self.peak = max(self.peak, self.now)
        try:
            await asyncio.sleep(0.2)  # the model server's own time
        finally:
            self.now -= 1
        self.served += 1
        return web.json_response(
            {
                "model": body["model"],
                "created_at": "2026-12-02T00:00:00Z",
                "message": {"role": "assistant", "content": f"answer {self.served}"},
                "done": True,
                "done_reason": "stop",
                "prompt_eval_count": 5,
                "eval_count": 2,
            }
        )


async def test_a_burst_to_a_local_model_server_waits_here_not_in_its_queue() -> None:
    """At defaults, eight chats asking a local Ollama at once: four requests reach it at a
    time (its own parallelism), the rest wait in the daemon, and every one is answered."""
    async with _FakeOllama() as ollama:
        llm = LLMClient("ollama_chat/llama3", api_base=ollama.url, timeout_s=5, max_retries=0)
        replies = await asyncio.gather(*(llm.complete(USER, None) for _ in range(8)))
    assert sorted(r.content or "" for r in replies) == sorted(f"answer {i}" for i in range(1, 9))
    assert ollama.peak == 4


async def test_a_model_litellm_does_not_know_is_priced_once_at_zero(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """litellm prices every response; for a model missing from its map that lookup
    fails after a long search, every call. The client registers it once at zero cost,
    and only the price: the context window still comes from the config."""
    from bot.agent.governor.budget import model_window
    from bot.agent.llm.cost_map import is_mapped, map_unknown_model
    from bot.agent.llm.loader import litellm_module

    litellm = await litellm_module()
    model = "openai/self-hosted-model-not-in-any-map"
    known = "openai/gpt-4o-mini"
    assert not is_mapped(litellm, model)
    fake_llm.reply_text("hi")
    await client(fake_llm, model=model).complete(USER, None)
    assert is_mapped(litellm, model)
    # Priced from counted tokens: litellm's counter on (the daemon turns it off for the
    # pricing of its own calls, bot/agent/llm/loader.py).
    monkeypatch.setattr(litellm, "disable_token_counter", False)
    assert litellm.completion_cost(model=model, prompt="hello", completion="hi") == 0.0
    assert model_window(litellm, model) is None  # the budget stays [context]'s
    assert not map_unknown_model(litellm, known)  # a mapped model keeps its real price
    assert litellm.completion_cost(model=known, prompt="hello", completion="hi") > 0


async def test_a_fallback_of_another_provider_gets_its_own_server_and_key(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """llm.api_base and llm.api_key are the main model's: a fallback of another provider
    is sent where its own variables say, with its own key, never the main one's."""
    async with FakeLLM() as other:
        monkeypatch.setenv("DEEPSEEK_API_BASE", other.url)
        monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek")
        fake_llm.for_model("fake-model").reply_error(503)
        other.reply_text("from deepseek")
        llm = client(fake_llm, max_retries=0, fallback_models=["deepseek/deepseek-chat"])
        resp = await llm.complete(USER, None)
    assert resp.content == "from deepseek"
    assert fake_llm.models() == ["fake-model"]
    (req,) = other.requests
    assert req.model == "deepseek-chat"
    assert req.headers["Authorization"] == "Bearer sk-deepseek"
    assert KEY not in str(req.headers)


async def test_a_fallback_of_another_provider_without_its_key_is_skipped(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    fake_llm.reply_error(503)
    llm = client(fake_llm, max_retries=0, fallback_models=["deepseek/deepseek-chat", FALLBACK])
    assert (await llm.complete(USER, None)).content == "echo: hello"
    assert fake_llm.models() == ["fake-model", "fake-fallback"]
    assert all(r.headers["Authorization"] == f"Bearer {KEY}" for r in fake_llm.requests)
