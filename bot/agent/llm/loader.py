"""Imports litellm lazily, once, and off the event loop.

``import litellm`` takes seconds and ~190 MB, so nothing imports it at module import
time. :func:`start_warmup` imports it on a daemon thread while the daemon starts;
:func:`litellm_module` waits for that import when a caller needs litellm before it is
done. The environment litellm reads at import (offline mode, bundled tables) is set
here, right before the import, so it always applies.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

log = logging.getLogger(__name__)

# Set (with setdefault, so an operator can override) before litellm is imported.
LITELLM_ENV = {
    # Use the bundled model cost map instead of fetching it from GitHub at import.
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    # Use the bundled Anthropic beta-header table instead of fetching it on first use.
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
    # Covers both of the above plus Hugging Face tokenizer downloads in token_counter
    # (bundled tokenizers still load; others fall back to tiktoken).
    "LITELLM_OFFLINE_MODE": "true",
}

# The daemon's own economies, asked for when an LLMClient is made (the daemon's path,
# before its warm-up import); a bare import (the bench's floor) is litellm as shipped. They
# are in the environment only during the import, so no child process inherits them.
LITELLM_ECONOMY_ENV = {
    # After each call litellm copies the request's messages for its logging callbacks,
    # to shorten base64 images in what they log; litellm reads this at import, and 0
    # turns the copy off. The daemon registers no litellm callback, so nothing reads
    # the copy: measured, about 8 µs of CPU per message sent, 0.4 ms a turn at 50.
    "MAX_BASE64_LENGTH_FOR_LOGGING": "0",
}


class LitellmLoader:
    """Imports and configures litellm exactly once, from whichever thread asks first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._module: Any = None
        self._thread: threading.Thread | None = None
        # The daemon's economies (see prefer_economy_env): LITELLM_ECONOMY_ENV during the
        # import, and the young generation widened after it.
        self.economy = False

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
                self._module = import_litellm(economy=self.economy)
                settle_imports()
                if self.economy:
                    widen_young_generation()
                    count_no_tokens_for_pricing(self._module)
            return self._module

    async def aload(self) -> Any:
        if self._module is not None:
            return self._module
        return await asyncio.to_thread(self.load)


def import_litellm(*, economy: bool = False) -> Any:
    """Set litellm's import-time environment, import it and configure it."""
    for key, value in LITELLM_ENV.items():
        os.environ.setdefault(key, value)
    with import_env(LITELLM_ECONOMY_ENV if economy else {}):
        import litellm

    # No "Give Feedback / Get Help" banners printed to stdout on errors.
    litellm.suppress_debug_info = True
    # Drop OpenAI params a provider does not support instead of failing the call.
    litellm.drop_params = True
    # There is no ``litellm.telemetry`` flag in this litellm: ``litellm.telemetry`` is the
    # proxy's opt-in telemetry package, so assigning it would only shadow a module.
    return litellm


def prefer_economy_env() -> None:
    """Import litellm with :data:`LITELLM_ECONOMY_ENV` (an operator's own value of a key
    wins) and widen the collector's young generation after it; once litellm is imported
    this changes nothing."""
    loader.economy = True


@contextlib.contextmanager
def import_env(values: dict[str, str]) -> Iterator[None]:
    """``values`` in the environment for the block, then gone again; a key the
    environment has already keeps its value."""
    added = [key for key in values if key not in os.environ]
    os.environ.update({key: values[key] for key in added})
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


def settle_imports() -> None:
    """Keep what the imports built out of every later garbage collection.

    litellm leaves about 400,000 long-lived objects (modules, classes, tables). Each full
    collection walks them all, about 200 ms that holds the GIL, and a busy daemon runs one
    every few hundred turns: measured, 0.7 ms of CPU per message and a 200 ms stall each
    time. One pass now, then ``gc.freeze()`` moves the survivors to the permanent
    generation, which collections skip; objects made afterwards are collected as usual.
    """
    gc.collect()
    gc.freeze()


# Objects allocated (less those freed) between two young-generation collections in the
# daemon; Python's default is 700. A turn through litellm allocates tens of thousands of
# container objects, nearly all freed by reference counting within the turn, yet at 700
# the collector ran about 500 times per 1,000 turns (each scanning what the turns in
# flight hold) and promoted them towards the costly full collections: measured, 0.30 ms of
# CPU per message in the collector, 0.03 ms at this value. The cost is at most this many
# unreachable cycles waiting a little longer (a few MB), never a leak.
YOUNG_GENERATION_THRESHOLD = 50_000


def widen_young_generation() -> None:
    """Collect the young generation less often (older generations keep their ratios)."""
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, middle, old)


def count_no_tokens_for_pricing(litellm: Any) -> None:
    """Turn off litellm's token counter (``disable_token_counter``, its own switch for
    that counter's CPU cost).

    litellm prices each streamed call as it starts, before the stream has any usage, by
    counting the whole prompt with tiktoken; that loads two tokenizers on the first
    stream (about 40 MB, for good) and tokenizes every streamed request again. The
    daemon reads neither that price nor a usage litellm makes up, so nothing is lost.
    Measured with 2,000 chats answering at once (bench/bench_many_chats.py): peak RSS
    440 to 334 MB in process. The governor, the one reader of real counts, turns the
    counter on for its own calls (bot/agent/governor/budget.py).
    """
    litellm.disable_token_counter = True


# The process-wide loader: every LLMClient and litellm_module() share one import.
loader = LitellmLoader()


def start_warmup() -> None:
    """Begin importing litellm in the background; returns at once."""
    loader.start()


def litellm_loaded() -> bool:
    """True once litellm is imported and configured."""
    return loader.loaded


async def litellm_module() -> Any:
    """The configured litellm module, importing it off the event loop when needed."""
    return await loader.aload()
