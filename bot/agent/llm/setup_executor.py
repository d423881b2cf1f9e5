"""litellm's request set-up on the event loop's own thread, for providers where it is pure.

``litellm.acompletion`` hands its synchronous part (provider resolution, parameter
mapping, building the request) to the loop's default executor and awaits it, because for
some providers that part blocks: AWS credentials for Bedrock, Google or Azure AD tokens,
IBM IAM tokens. For an OpenAI-compatible endpoint or a plain API-key provider it is pure
CPU, and the hop only costs: a worker thread woken, two hand-overs of the GIL, and under
load the loop thread waiting for the GIL behind that worker and the database thread.
Measured, 0.6-0.7 ms of CPU per message (about 8%) with the bench's model.

:class:`LoopExecutor` is the loop's default executor: a ``ThreadPoolExecutor`` that runs
a job on the calling thread only when all of these hold, and otherwise exactly as asyncio's
default does (DNS lookups, ``asyncio.to_thread``, anything else):

- the caller is inside :func:`setup_inline` (``LLMClient`` enters it only for a model
  whose provider is in :data:`PURE_SETUP_PROVIDERS`);
- the job has litellm's own shape, ``partial(Context.run, partial(litellm.main.completion,
  ...))``; another litellm release that wraps it differently simply goes back to threads.

litellm's code path is unchanged: the same function runs, on another thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

T = TypeVar("T")

# Providers whose litellm set-up reads only its arguments and the environment (API-key
# auth); every other provider keeps the worker thread.
PURE_SETUP_PROVIDERS = frozenset(
    {
        "openai",
        "text-completion-openai",
        "anthropic",
        "gemini",
        "groq",
        "mistral",
        "deepseek",
        "openrouter",
        "together_ai",
        "fireworks_ai",
        "xai",
        "cerebras",
        "deepinfra",
        "perplexity",
        "ollama",
        "ollama_chat",
        "hosted_vllm",
        "lm_studio",
    }
)

_inline: contextvars.ContextVar[bool] = contextvars.ContextVar("setup_inline", default=False)


def provider_of(litellm: Any, model: str) -> str:
    """litellm's provider name for ``model`` ("" when it cannot tell)."""
    try:
        return str(litellm.get_llm_provider(model)[1])
    except Exception:  # an unknown provider is refused elsewhere; here it keeps the thread
        return ""


@contextlib.contextmanager
def setup_inline(enabled: bool) -> Iterator[None]:
    """Within the block, litellm's set-up for this call may run on the loop's thread."""
    token = _inline.set(enabled)
    try:
        yield
    finally:
        _inline.reset(token)


def is_litellm_setup(fn: Callable[..., Any]) -> bool:
    """``partial(Context.run, partial(litellm.main.completion, ...))``, as acompletion
    submits it (litellm not imported: False)."""
    main = sys.modules.get("litellm.main")
    if main is None or not isinstance(fn, partial) or len(fn.args) != 1 or fn.keywords:
        return False
    if not isinstance(getattr(fn.func, "__self__", None), contextvars.Context):
        return False
    inner = fn.args[0]
    return isinstance(inner, partial) and inner.func is getattr(main, "completion", None)


class LoopExecutor(ThreadPoolExecutor):
    """asyncio's default executor, but litellm's pure set-up runs on the calling thread."""

    def __init__(self) -> None:
        super().__init__(thread_name_prefix="asyncio")
        self.inline_runs = 0  # how many set-ups skipped the hop (a test reads it)

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        if args or kwargs or not _inline.get() or not is_litellm_setup(fn):
            return super().submit(fn, *args, **kwargs)
        self.inline_runs += 1
        future: Future[T] = Future()
        try:
            future.set_result(fn())
        except BaseException as exc:  # as a worker thread hands it over: to the awaiter
            future.set_exception(exc)
        return future


def install(loop: asyncio.AbstractEventLoop | None = None) -> LoopExecutor:
    """Make a :class:`LoopExecutor` the (running) loop's default executor, once."""
    loop = loop or asyncio.get_running_loop()
    current = getattr(loop, "_default_executor", None)  # asyncio keeps no public getter
    if isinstance(current, LoopExecutor):
        return current
    executor = LoopExecutor()
    loop.set_default_executor(executor)
    if isinstance(current, ThreadPoolExecutor):
        current.shutdown(wait=False)  # one made before the daemon started: let it go
    return executor
