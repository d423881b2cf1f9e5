"""The one place the daemon talks to a model: litellm behind retries and fallbacks.

``import litellm`` takes seconds and ~190 MB, so this module never imports it at
import time. :func:`start_warmup` imports it on a daemon thread while the daemon
starts; :meth:`LLMClient.complete` waits for that import when it is not done yet.

Retries are ours (tenacity), not litellm's: litellm is called with
``num_retries=0`` so one attempt is one HTTP request, the retry policy is the same
for every provider, and every failed attempt is logged here.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from bot.errors import LLMError, ModelNotConfiguredError, ModelUnavailableError
from bot.toolspec import ToolCall

log = logging.getLogger(__name__)

# Set (with setdefault, so an operator can override) before litellm is imported.
_LITELLM_ENV = {
    # Use the bundled model cost map instead of fetching it from GitHub at import.
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    # Use the bundled Anthropic beta-header table instead of fetching it on first use.
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
    # Covers both of the above plus Hugging Face tokenizer downloads in token_counter
    # (bundled tokenizers still load; others fall back to tiktoken).
    "LITELLM_OFFLINE_MODE": "true",
}

CONFIGURE_HINT = (
    "Set llm.model, llm.api_key and llm.api_base in bot.toml, or the environment "
    "variables BOT_LLM__MODEL, BOT_LLM__API_KEY and BOT_LLM__API_BASE "
    "(or the provider's usual variable, such as {env})."
)


# --------------------------------------------------------------------------- import


class _Loader:
    """Imports and configures litellm exactly once, from whichever thread asks first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._module: Any = None
        self._thread: threading.Thread | None = None

    @property
    def loaded(self) -> bool:
        return self._module is not None

    def start(self) -> None:
        with self._lock:
            if self._module is not None or self._thread is not None:
                return
            # A daemon thread, not the loop's executor: a slow import must never delay
            # the daemon's exit, and warm-up needs no running loop.
            self._thread = threading.Thread(target=self._warm, name="litellm-warmup", daemon=True)
            self._thread.start()

    def _warm(self) -> None:
        started = time.perf_counter()
        try:
            self.load()
        except Exception:
            log.warning("litellm warm-up import failed", exc_info=True)
            return
        # Operators (and a start-up test) see that `ready:` never waited for this.
        log.info("litellm warm-up import finished (%.1f s)", time.perf_counter() - started)

    def load(self) -> Any:
        if self._module is not None:
            return self._module
        with self._lock:
            if self._module is None:
                self._module = _import_litellm()
            return self._module

    async def aload(self) -> Any:
        if self._module is not None:
            return self._module
        return await asyncio.to_thread(self.load)


def _import_litellm() -> Any:
    for key, value in _LITELLM_ENV.items():
        os.environ.setdefault(key, value)
    import litellm

    # No "Give Feedback / Get Help" banners printed to stdout on errors.
    litellm.suppress_debug_info = True
    # Drop OpenAI params a provider does not support instead of failing the call.
    litellm.drop_params = True
    # There is no ``litellm.telemetry`` flag in this litellm: ``litellm.telemetry`` is the
    # proxy's opt-in telemetry package, so assigning it would only shadow a module.
    return litellm


_loader = _Loader()


def start_warmup() -> None:
    """Begin importing litellm in the background; returns at once."""
    _loader.start()


def litellm_loaded() -> bool:
    """True once litellm is imported and configured."""
    return _loader.loaded


async def litellm_module() -> Any:
    """The configured litellm module, importing it off the event loop when needed."""
    return await _loader.aload()


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class LLMResponse:
    """One model answer; ``model`` is the configured model string that produced it."""

    content: str | None
    tool_calls: tuple[ToolCall, ...]
    model: str
    finish_reason: str | None
    usage: Mapping[str, int] = field(default_factory=dict)


class _EmptyResponse(Exception):
    """The provider answered 200 with no choices; worth another try."""


@dataclass(frozen=True, slots=True)
class _Failure:
    kind: str
    retryable: bool
    retry_after: float | None = None
    expected: bool = True


def _get(obj: Any, key: str) -> Any:
    """Read a field from a pydantic-ish object or a dict, None when absent."""
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def _parse_tool_call(raw: Any) -> ToolCall:
    function = _get(raw, "function")
    name = _get(function, "name") if function is not None else None
    call_id = _get(raw, "id")
    return ToolCall(
        id=call_id if isinstance(call_id, str) and call_id else f"call_{uuid.uuid4().hex[:24]}",
        name=name if isinstance(name, str) and name else None,
        arguments=_get(function, "arguments") if function is not None else None,
    )


def _parse_usage(raw: Any) -> dict[str, int]:
    usage: dict[str, int] = {}
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        value = _get(raw, key) if raw is not None else None
        if isinstance(value, int) and not isinstance(value, bool):
            usage[key] = value
    return usage


def _parse_response(resp: Any, model: str) -> LLMResponse:
    choices = _get(resp, "choices")
    if not choices:
        raise _EmptyResponse("the provider returned no choices")
    choice = choices[0]
    message = _get(choice, "message")
    content = _get(message, "content") if message is not None else None
    raw_calls = (_get(message, "tool_calls") if message is not None else None) or ()
    finish = _get(choice, "finish_reason")
    return LLMResponse(
        content=content if isinstance(content, str) or content is None else str(content),
        tool_calls=tuple(_parse_tool_call(c) for c in raw_calls),
        model=model,
        finish_reason=finish if isinstance(finish, str) else None,
        usage=_parse_usage(_get(resp, "usage")),
    )


# --------------------------------------------------------------------------- errors


def _retry_after(exc: BaseException) -> float | None:
    """Seconds from a Retry-After header on the provider's error response, if any."""
    headers: Any = getattr(exc, "headers", None) or _get(getattr(exc, "response", None), "headers")
    if headers is None:
        return None
    try:
        value = headers.get("retry-after-ms")
        if value is not None:
            return max(0.0, float(value) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = parsedate_to_datetime(str(value))
            return max(0.0, (when - datetime.now(when.tzinfo)).total_seconds())
    except (AttributeError, TypeError, ValueError):
        return None


def _classify(litellm: Any, exc: BaseException) -> _Failure:
    """Name a failure and say whether another attempt on the same model may succeed."""
    status = getattr(exc, "status_code", None)
    checks: tuple[tuple[str, str, bool], ...] = (
        ("Timeout", "timeout", True),
        ("RateLimitError", "rate limited (HTTP 429)", True),
        ("ContextWindowExceededError", "context window exceeded", False),
        ("ContentPolicyViolationError", "content policy violation", False),
        ("BadRequestError", "bad request (HTTP 400)", False),
        ("NotFoundError", "model not found (HTTP 404)", False),
        ("PermissionDeniedError", "permission denied (HTTP 403)", False),
        ("UnprocessableEntityError", "unprocessable request (HTTP 422)", False),
        ("ServiceUnavailableError", "service unavailable (HTTP 503)", True),
        ("BadGatewayError", "bad gateway (HTTP 502)", True),
        ("InternalServerError", f"server error (HTTP {status or 500})", True),
        ("APIConnectionError", "connection error", True),
    )
    if isinstance(exc, _EmptyResponse):
        return _Failure("empty response (no choices)", True)
    if isinstance(exc, TimeoutError):
        return _Failure("timeout", True)
    if _is_connection_error(exc):
        # litellm reports a refused/reset connection as InternalServerError (HTTP 500).
        return _Failure("connection error", True)
    for class_name, kind, retryable in checks:
        cls = getattr(litellm, class_name, None)
        if isinstance(cls, type) and isinstance(exc, cls):
            return _Failure(kind, retryable, _retry_after(exc) if retryable else None)
    if isinstance(status, int):
        retryable = status >= 500 or status in (408, 409, 425, 429)
        return _Failure(f"HTTP {status}", retryable, _retry_after(exc) if retryable else None)
    return _Failure(f"unexpected error ({type(exc).__name__})", False, expected=False)


def _is_connection_error(exc: BaseException) -> bool:
    """True when the cause chain holds a transport failure rather than an HTTP answer."""
    seen = 0
    cause: BaseException | None = exc
    while cause is not None and seen < 10:
        names = {cls.__name__ for cls in type(cause).__mro__}
        if "APITimeoutError" in names:
            return False
        if isinstance(cause, ConnectionError) or "APIConnectionError" in names:
            return True
        cause = cause.__cause__ or cause.__context__
        seen += 1
    return False


def _is_auth_error(litellm: Any, exc: BaseException) -> bool:
    cls = getattr(litellm, "AuthenticationError", None)
    return isinstance(cls, type) and isinstance(exc, cls)


# --------------------------------------------------------------------------- client


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
    ) -> None:
        self.model = model
        self.api_base = api_base
        self._api_key = api_key
        self.fallback_models = tuple(fallback_models)
        self.timeout_s = timeout_s
        self.max_retries = max(0, max_retries)
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self._configured: set[str] = set()
        self._jitter = wait_exponential_jitter(
            initial=backoff_base_s, max=backoff_max_s, jitter=backoff_base_s
        )
        # Called once per HTTP attempt with (model, None) or (model, failure kind): the
        # daemon counts model calls and errors through it without this module knowing how.
        self.on_attempt: Callable[[str, str | None], None] | None = None

    def __repr__(self) -> str:
        return f"LLMClient(model={self.model!r}, api_base={self.api_base!r})"

    @staticmethod
    def start_warmup() -> None:
        """Begin importing litellm in the background; returns at once."""
        start_warmup()

    async def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> LLMResponse:
        """One model answer, after retries and fallbacks; raises an :class:`LLMError`."""
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
                return await self._call_with_retries(litellm, model, messages, tools)
            except ModelNotConfiguredError:
                raise
            except Exception as err:
                last = (model, _classify(litellm, err).kind, err)
        assert last is not None
        failed_model, kind, cause = last
        tried = len(self.fallback_models) + 1
        hint = ""
        if kind == "connection error":
            where = self.api_base or "the provider"
            hint = (
                f"; {where} did not answer: check llm.api_base / BOT_LLM__API_BASE "
                "and that the server is running"
            )
        raise ModelUnavailableError(
            f"model call failed: {kind} from {failed_model}"
            + (f" (tried {tried} models)" if tried > 1 else "")
            + hint
        ) from cause

    # -- one model -----------------------------------------------------------------

    def _check_configured(self, litellm: Any, model: str) -> None:
        """Fail fast, without a network call, on an unknown provider or a missing key.

        Also runs when only ``api_base`` is set: the OpenAI client refuses to send a
        request without a key, and litellm reports that as a retryable HTTP 500.
        """
        if model in self._configured:
            return
        try:
            _, _, _, default_base = litellm.get_llm_provider(model, api_base=self.api_base or None)
        except Exception as exc:
            raise ModelNotConfiguredError(
                f"Model {model!r} names no known provider (use e.g. 'openai/gpt-4o-mini'). "
                + CONFIGURE_HINT.format(env="OPENAI_API_KEY")
            ) from exc
        missing: list[str] = []
        if not self._api_key:
            try:
                env = litellm.validate_environment(model, api_base=self.api_base or None)
            except Exception:
                log.debug("validate_environment failed for %s", model, exc_info=True)
                env = {}
            missing = [
                k
                for k in env.get("missing_keys") or ()
                if not ((default_base or self.api_base) and k.endswith("_API_BASE"))
            ]
        if missing:
            placeholder = (
                " A local server that ignores keys still needs a placeholder, "
                'e.g. llm.api_key = "none".'
                if self.api_base
                else ""
            )
            raise ModelNotConfiguredError(
                f"No credentials for model {model!r} (missing {', '.join(missing)}). "
                + CONFIGURE_HINT.format(env=missing[0])
                + placeholder
            )
        self._configured.add(model)

    async def _call_with_retries(
        self,
        litellm: Any,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
    ) -> LLMResponse:
        retrying = AsyncRetrying(
            stop=stop_after_attempt(1 + self.max_retries),
            wait=lambda state: self._wait(litellm, state),
            retry=retry_if_exception(lambda exc: _classify(litellm, exc).retryable),
            reraise=True,
        )
        attempts = 1 + self.max_retries
        async for attempt in retrying:
            with attempt:
                return await self._attempt(
                    litellm,
                    model,
                    messages,
                    tools,
                    number=attempt.retry_state.attempt_number,
                    attempts=attempts,
                )
        raise AssertionError("unreachable: tenacity re-raises the last error")

    def _wait(self, litellm: Any, state: RetryCallState) -> float:
        """Exponential backoff with jitter, stretched to a provider's Retry-After (capped)."""
        delay = self._jitter(state)
        exc = state.outcome.exception() if state.outcome is not None else None
        if exc is not None:
            retry_after = _classify(litellm, exc).retry_after
            if retry_after is not None:
                delay = max(delay, min(retry_after, self.backoff_max_s))
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
    ) -> LLMResponse:
        try:
            # litellm enforces timeout_s itself; this outer guard only catches a hang
            # outside its HTTP client (DNS, a stuck pool) so a chat can never wait forever.
            async with asyncio.timeout(self.timeout_s * 2 + 5):
                resp = await litellm.acompletion(
                    model=model,
                    messages=messages,
                    tools=tools or None,
                    api_base=self.api_base or None,
                    api_key=self._api_key or None,
                    timeout=self.timeout_s,
                    num_retries=0,
                )
            parsed = _parse_response(resp, model)
        except Exception as exc:
            failure = _classify(litellm, exc)
            self._observe(model, failure.kind)
            if not failure.retryable:
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
            if _is_auth_error(litellm, exc):
                raise ModelNotConfiguredError(
                    f"The provider rejected the credentials for model {model!r} "
                    f"({self._redact(_first_line(exc))}). "
                    + CONFIGURE_HINT.format(env=_provider_key_env(litellm, model))
                ) from exc
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


def _first_line(exc: BaseException) -> str:
    """Untruncated, so redaction sees a whole key before anything is cut."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _provider_key_env(litellm: Any, model: str) -> str:
    """The provider's own API-key variable for the hint, e.g. ANTHROPIC_API_KEY."""
    try:
        env = litellm.validate_environment(model, api_key=None)
        missing = env.get("missing_keys") or ()
        if missing:
            return str(missing[0])
        provider = litellm.get_llm_provider(model)[1]
    except Exception:
        return "OPENAI_API_KEY"
    return f"{str(provider).upper()}_API_KEY"
