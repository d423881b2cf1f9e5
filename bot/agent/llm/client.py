"""The one place the daemon talks to a model: litellm behind retries and fallbacks.

``import litellm`` takes seconds and ~190 MB, so this module never imports it at
import time: :mod:`bot.agent.llm.loader` warms it up in the background and
:meth:`LLMClient.complete` waits for that import when it is not done yet.

Retries are ours (tenacity), not litellm's: litellm is called with
``num_retries=0`` so one attempt is one HTTP request, the retry policy is the same
for every provider, and every failed attempt is logged here. Which failures are
worth a retry is decided in :mod:`bot.agent.llm.errors`; configuration mistakes are
caught before any request by :mod:`bot.agent.llm.credentials`.

A semaphore caps the requests in flight across all chats (``[llm]
max_concurrent_calls``). Chats themselves are cheap to run at once (a turn mostly
waits on the model), so the cap sits where the cost is: it bounds the request and
response bodies held in memory; the default depends on the provider
(:mod:`bot.agent.llm.concurrency`): for a hosted API the connections litellm's pool
keeps per host, so waiting on a slow model, not the cap, sets the pace; for a model
server on one machine, its own parallelism.

This module is the public API: everything callers need is importable from here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from bot.agent.llm.concurrency import default_max_calls
from bot.agent.llm.cost_map import map_unknown_model
from bot.agent.llm.credentials import CONFIGURE_HINT, check_configured, credentials_rejected
from bot.agent.llm.errors import (
    NOT_FOUND,
    REFUSALS,
    TOO_LONG,
    Failure,
    classify,
    is_auth_error,
    is_connection_error,
)
from bot.agent.llm.loader import (
    LitellmLoader,
    litellm_loaded,
    litellm_module,
    prefer_economy_env,
    start_warmup,
)
from bot.agent.llm.loader import loader as _loader
from bot.agent.llm.params import request_params
from bot.agent.llm.response import (
    AnswerSink,
    EmptyResponse,
    LLMResponse,
    StreamCut,
    StreamOverrun,
    parse_response,
)
from bot.agent.llm.setup_executor import PURE_SETUP_PROVIDERS, provider_of, setup_inline
from bot.agent.llm.setup_executor import install as install_setup_executor
from bot.agent.llm.stream import AnswerStream, StreamBounds
from bot.errors import LLMError, ModelNotConfiguredError, ModelUnavailableError
from bot.retrying import retry_after_failure

__all__ = [
    "CONFIGURE_HINT",
    "LLMClient",
    "LLMResponse",
    "litellm_loaded",
    "litellm_module",
    "start_warmup",
]

log = logging.getLogger(__name__)

_Loader = LitellmLoader  # the names tests reach for: llm._Loader() and llm._loader
# No stream_options include_usage: nothing reads a streamed turn's token counts, and
# litellm's usage bookkeeping per chunk was a third of a streamed call's CPU.
_STREAMED: dict[str, Any] = {"stream": True}
GUARD_STEP_S = 1.0  # how often a stream's hang guard is pushed back while chunks arrive
# A streamed answer is read for at most this many hang guards (2 x timeout_s + 5 s each:
# 10 min 25 s at the default 60 s), and up to this many times what one message carries
# ([agent] max_answer_chars; the rest of a long answer goes out as answer.md). Past
# either it is a model writing in a loop or a proxy that never ends the stream.
STREAM_GUARDS = 5
STREAM_ANSWERS = 10
# The failure kind of an attempt /stop or shutdown cut short (bot_model_errors_total): it
# is still one HTTP attempt of bot_model_calls_total.
CANCELLED = "cancelled"
# What an operator checks when a model keeps failing for a reason in its setup; a user is
# told it too (a setting's name, never its value).
SETUP_HINTS = {
    "connection error": "check llm.api_base / BOT_LLM__API_BASE and that the server is running",
    NOT_FOUND: (
        "check llm.model / BOT_LLM__MODEL: the provider serves no model of that name "
        "(a local server may need it pulled first)"
    ),
}


async def _read_stream(
    resp: Any,
    model: str,
    sink: AnswerSink,
    *,
    guard: asyncio.Timeout,
    guard_s: float,
    bounds: StreamBounds,
) -> LLMResponse:
    """Every chunk of a streamed answer, assembled; an empty stream is retried. The hang
    guard watches the gaps between chunks, not the whole answer: a model writing steadily
    for minutes (a long answer, a slow local model) is not cut off mid-answer. One that
    keeps writing past ``bounds`` is: the turn ends with its answer so far."""
    assembled = AnswerStream(model, sink)
    loop = asyncio.get_running_loop()
    moved = loop.time()
    ends = moved + bounds.seconds
    why = ""
    try:
        async for chunk in resp:
            assembled.feed(chunk)
            now = loop.time()
            if now - moved > GUARD_STEP_S:  # a timer moved per second, not per chunk
                guard.reschedule(now + guard_s)
                moved = now
            if assembled.chars > bounds.max_chars or now >= ends:
                why = _past(bounds, assembled.chars)
                break
    except Exception as exc:
        if assembled.chunks and is_connection_error(exc):
            raise StreamCut(f"the answer broke off after {assembled.chunks} chunks") from exc
        raise
    if why:
        return await _cut_short(resp, assembled, model, why)
    if not assembled.chunks:
        raise EmptyResponse("the provider streamed no chunks")
    return assembled.response()


def _past(bounds: StreamBounds, chars: int) -> str:
    """Why a stream past its ``bounds`` is read no further."""
    if chars > bounds.max_chars:
        return f"it ran past {bounds.max_chars:,} characters"
    minutes = bounds.seconds / 60
    took = f"{minutes:.0f} minutes" if minutes >= 2 else f"{bounds.seconds:.0f} seconds"
    return f"the model was still writing after {took}"


async def _cut_short(resp: Any, assembled: AnswerStream, model: str, why: str) -> LLMResponse:
    """The answer so far of a stream stopped at its bounds, saying so; its connection is
    closed (litellm's wrapper would hold it open while the model writes on)."""
    log.warning("streamed answer from %s stopped: %s", model, why)
    aclose = getattr(resp, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except Exception as exc:  # the answer stands; at worst the connection lingers
            log.debug("closing the stream from %s failed: %s", model, exc)
    cut = assembled.cut(f"\n\n… [The answer was cut here: {why}.]")
    if cut is None:
        raise StreamOverrun(why)
    return cut


class LLMClient:
    """Calls one model through litellm, with retries and then fallback models."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str = "",
        api_key: str = "",
        fallback_models: Sequence[str] = (),
        timeout_s: float = 60,
        max_retries: int = 2,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 8.0,
        max_concurrent_calls: int = 0,
        max_answer_chars: int = 20_000,  # [agent] max_answer_chars
        max_output_tokens: int = 0,  # [llm] max_output_tokens (bot.agent.llm.params)
    ) -> None:
        self.model = model
        self.api_base = api_base
        self._api_key = api_key
        self.fallback_models = tuple(fallback_models)
        self.timeout_s = timeout_s
        # litellm enforces timeout_s itself; this outer guard only catches a hang outside
        # its HTTP client (DNS, a stuck pool) so a chat can never wait forever.
        self.hang_guard_s = timeout_s * 2 + 5
        self.stream_bounds = StreamBounds(
            max_chars=max_answer_chars * STREAM_ANSWERS, seconds=self.hang_guard_s * STREAM_GUARDS
        )
        self.max_retries = max(0, max_retries)
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        # A provider's Retry-After is waited out up to one request's timeout (a
        # per-minute limit's 20 s, say); asking for longer, the model is not retried.
        self.retry_after_max_s = max(timeout_s, backoff_max_s)
        self._configured: set[str] = set()
        # model -> (api_base, api_key) it is sent with: see _credentials.
        self._credentials_of: dict[str, tuple[str, str]] = {}
        self._pure_setup: dict[str, bool] = {}  # model -> litellm's set-up may skip a thread
        self.max_output_tokens = max_output_tokens
        self._params: dict[str, dict[str, Any]] = {}  # model -> what its requests add
        # In-flight requests across every chat: see [llm] max_concurrent_calls; 0: the
        # primary model's provider decides (bot.agent.llm.concurrency).
        self.max_concurrent_calls = max_concurrent_calls or default_max_calls(model)
        self._calls = asyncio.Semaphore(self.max_concurrent_calls)
        self._jitter = wait_exponential_jitter(
            initial=backoff_base_s, max=backoff_max_s, jitter=backoff_base_s
        )
        # Called once per HTTP attempt with (model, None) or (model, failure kind): the
        # daemon counts model calls and errors through it without this module knowing how.
        self.on_attempt: Callable[[str, str | None], None] | None = None
        prefer_economy_env()

    def __repr__(self) -> str:
        return f"LLMClient(model={self.model!r}, api_base={self.api_base!r})"

    @staticmethod
    def prepare_loop() -> None:
        """The running loop's default executor becomes one that runs litellm's pure
        request set-up without a thread hop (see setup_executor)."""
        install_setup_executor()

    @staticmethod
    def start_warmup() -> None:
        """Begin importing litellm in the background; returns at once."""
        start_warmup()

    async def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> LLMResponse:
        """One model answer, after retries and fallbacks; raises an :class:`LLMError`."""
        return await self._answer(messages, tools, None)

    async def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, sink: AnswerSink
    ) -> LLMResponse:
        """:meth:`complete`, streamed (``stream=True``): ``sink`` watches the
        ``final_result`` answer grow (:mod:`bot.agent.llm.stream`). A retry or a
        fallback model streams its answer afresh, replacing what ``sink`` was shown."""
        return await self._answer(messages, tools, sink)

    async def _answer(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        sink: AnswerSink | None,
    ) -> LLMResponse:
        try:
            litellm = await _loader.aload()
        except ImportError as exc:
            raise LLMError(f"litellm could not be imported: {exc}") from exc

        last: tuple[str, str, BaseException] | None = None
        for index, model in enumerate((self.model, *self.fallback_models)):
            try:
                self._check_configured(litellm, model)
            except ModelNotConfiguredError as err:
                if index == 0:
                    raise
                log.warning("skipping fallback model %s: %s", model, err)
                last = (model, "not configured", err)
                continue
            try:
                return await self._call_with_retries(litellm, model, messages, tools, sink)
            except ModelNotConfiguredError:
                raise
            except Exception as err:
                last = (model, classify(litellm, err).kind, err)
        assert last is not None
        raise self._unavailable(*last) from last[2]

    def _unavailable(self, model: str, kind: str, cause: BaseException) -> ModelUnavailableError:
        """The error for the last model that failed: its kind, and the setting to check
        when a setting, not waiting, is what mends it."""
        tried = len(self.fallback_models) + 1
        hint = SETUP_HINTS.get(kind, "")
        where = f"; {hint}" if hint else ""
        if kind == "connection error":
            base = self._credentials_of.get(model, ("", ""))[0]
            where = f"; {base or 'the provider'} did not answer: {hint}"
        return ModelUnavailableError(
            f"model call failed: {kind} from {model}"
            + (f" (tried {tried} models)" if tried > 1 else "")
            + where,
            hint=hint,
            refused=kind in REFUSALS,
            too_long=kind == TOO_LONG,
            setup=kind == NOT_FOUND,
        )

    # -- one model -----------------------------------------------------------------

    def _check_configured(self, litellm: Any, model: str) -> None:
        """Fail fast on an unknown provider or a missing key; checked once per model."""
        if model in self._configured:
            return
        provider = provider_of(litellm, model)
        api_base, api_key = self._credentials(litellm, model, provider)
        check_configured(litellm, model, api_base=api_base, api_key=api_key)
        map_unknown_model(litellm, model)
        self._credentials_of[model] = (api_base, api_key)
        self._pure_setup[model] = provider in PURE_SETUP_PROVIDERS
        self._params[model] = request_params(litellm, model, self.max_output_tokens)
        self._configured.add(model)

    def _credentials(self, litellm: Any, model: str, provider: str) -> tuple[str, str]:
        """``llm.api_base`` and ``llm.api_key`` belong to the main model: a fallback gets
        them only when litellm resolves it to the same provider. Another provider's
        fallback gets neither, so litellm reads that provider's own variables
        (ANTHROPIC_API_KEY, ...): the main key never reaches another company, nor
        another provider's requests the main model's server."""
        if model == self.model or (provider and provider == provider_of(litellm, self.model)):
            return self.api_base, self._api_key
        return "", ""

    async def _call_with_retries(
        self,
        litellm: Any,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        sink: AnswerSink | None = None,
    ) -> LLMResponse:
        attempts = 1 + self.max_retries
        return await retry_after_failure(
            lambda number: self._attempt(
                litellm, model, messages, tools, number=number, attempts=attempts, sink=sink
            ),
            lambda: AsyncRetrying(
                stop=stop_after_attempt(attempts),
                wait=lambda state: self._wait(litellm, state),
                retry=retry_if_exception(lambda exc: self._retried(classify(litellm, exc))),
                reraise=True,
            ),
        )

    def _retried(self, failure: Failure) -> bool:
        """Worth another attempt on this model: a retryable failure whose Retry-After, if
        any, is one we wait out. Asked to wait longer, the attempts left would all fail
        inside that wait: the next fallback model (or the error) comes at once instead."""
        return failure.retryable and not self._too_long(failure)

    def _too_long(self, failure: Failure) -> bool:
        return failure.retry_after is not None and failure.retry_after > self.retry_after_max_s

    def _wait(self, litellm: Any, state: RetryCallState) -> float:
        """Exponential backoff with jitter, stretched to a provider's Retry-After."""
        delay = self._jitter(state)
        exc = state.outcome.exception() if state.outcome is not None else None
        if exc is not None:
            retry_after = classify(litellm, exc).retry_after
            if retry_after is not None:
                delay = max(delay, min(retry_after, self.retry_after_max_s))
        return delay

    async def _attempt(
        self,
        litellm: Any,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        *,
        number: int,
        attempts: int,
        sink: AnswerSink | None = None,
    ) -> LLMResponse:
        sent = False  # past the cap on requests in flight: an HTTP attempt counts
        try:
            async with self._calls, asyncio.timeout(self.hang_guard_s) as guard:
                sent = True
                api_base, api_key = self._credentials_of.get(model, ("", ""))
                with setup_inline(self._pure_setup.get(model, False)):
                    resp = await litellm.acompletion(
                        model=model,
                        messages=messages,
                        tools=tools or None,
                        api_base=api_base or None,
                        api_key=api_key or None,
                        timeout=self.timeout_s,
                        num_retries=0,
                        **self._params.get(model, {}),
                        **_STREAMED if sink is not None else {},
                    )
                if sink is None:
                    parsed = parse_response(resp, model)
                else:
                    parsed = await _read_stream(
                        resp,
                        model,
                        sink,
                        guard=guard,
                        guard_s=self.hang_guard_s,
                        bounds=self.stream_bounds,
                    )
        except asyncio.CancelledError:  # /stop or shutdown: a BaseException, counted too
            if sent:
                self._observe(model, CANCELLED)
            raise
        except Exception as exc:
            failure = classify(litellm, exc)
            self._observe(model, failure.kind)
            if self._too_long(failure):
                outcome = f" (not retried: Retry-After {failure.retry_after:.0f} s)"
            elif not failure.retryable:
                outcome = " (not retried)"
            elif number >= attempts:
                outcome = " (out of retries)"
            else:
                outcome = ""
            log.warning(
                "LLM call failed: model=%s attempt=%d/%d kind=%s%s: %s",
                model,
                number,
                attempts,
                failure.kind,
                outcome,
                self._redact(str(exc)),
                exc_info=not failure.expected,
            )
            if is_auth_error(litellm, exc):
                raise credentials_rejected(litellm, model, exc, self._redact) from exc
            raise
        self._observe(model, None)
        return parsed

    def _observe(self, model: str, failure: str | None) -> None:
        if self.on_attempt is not None:
            try:
                self.on_attempt(model, failure)
            except Exception:  # counting must never break a model call
                log.debug("on_attempt hook failed", exc_info=True)

    def _redact(self, text: str) -> str:
        """One line of at most 500 characters with the API key masked."""
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return text.replace("\n", " ")[:500]
