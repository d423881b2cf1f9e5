"""How many model requests may be in flight when ``[llm] max_concurrent_calls`` is 0.

A hosted API serves thousands of requests at once per key and limits a key by requests
and tokens per minute, which a cap on requests in flight does not bound: its 429s are
waited out by the client's retries (Retry-After honoured). What does bound a hosted
call is litellm's connection pool: 500 connections per host (its
``AIOHTTP_CONNECTOR_LIMIT_PER_HOST``). A request beyond that waits inside litellm, its
timeout already running, and litellm logs a warning for every such wait. So the hosted
default is that pool's size: a burst of chats waits on the model, not on a cap, while
the request and response bodies held in memory stay bounded and background calls
(summaries, memory) queue behind the chats'. A model server on one machine runs a
handful of requests in parallel and queues the rest inside itself, where each queued
request's timeout is already running, so a burst turns into timeouts and retries: Ollama
runs 4 at once by default (``OLLAMA_NUM_PARALLEL``; 1 on a small machine), LM Studio
and llamafile about as many. For those providers the default cap is their parallelism,
so the rest wait here, where waiting costs no timeout and no retry.
"""

from __future__ import annotations

import os

# litellm's per-host pool: the environment variable it reads at import, and its default.
POOL_PER_HOST_ENV = "AIOHTTP_CONNECTOR_LIMIT_PER_HOST"
POOL_PER_HOST = 500
UNPOOLED_CALLS = 1024  # litellm's per-host limit switched off: one per chat at once
SINGLE_MACHINE_CALLS = 4
# litellm provider prefixes of model servers that run on one machine (their model
# strings always carry the prefix, so no litellm lookup is needed to tell).
SINGLE_MACHINE_PROVIDERS = frozenset({"ollama", "ollama_chat", "lm_studio", "llamafile"})


def default_max_calls(model: str) -> int:
    """The in-flight cap for ``model`` when the config leaves it to the provider."""
    provider, sep, _ = model.partition("/")
    if sep and provider in SINGLE_MACHINE_PROVIDERS:
        return SINGLE_MACHINE_CALLS
    return hosted_calls()


def hosted_calls() -> int:
    """litellm's connections per host, read as it reads them (500 unless the variable says)."""
    try:
        limit = int(os.environ.get(POOL_PER_HOST_ENV, POOL_PER_HOST))
    except ValueError:
        limit = POOL_PER_HOST  # litellm too falls back to its default on such a value
    return limit if limit > 0 else UNPOOLED_CALLS
