"""How many model requests may be in flight when ``[llm] max_concurrent_calls`` is 0.

A hosted API serves thousands of requests at once per key and limits a key by requests
and tokens per minute, which a cap on requests in flight does not bound: its 429s are
waited out by the client's retries (Retry-After honoured). So for a hosted API the cap is
one request per chat the daemon runs at once (``[agent] max_concurrent_chats``' default,
1,024): a burst of chats waits on the model, not on the cap, while background calls
(summaries, memory) queue behind the chats' and the number of request and response
bodies held in memory stays bounded. A model server on one machine runs a handful of
requests in parallel and queues the rest inside itself, where each queued request's
timeout is already running, so a burst turns into timeouts and retries: Ollama runs 4
at once by default (``OLLAMA_NUM_PARALLEL``; 1 on a small machine), LM Studio and
llamafile about as many. For those providers the default cap is their parallelism, so
the rest wait here, where waiting costs no timeout and no retry.
"""

from __future__ import annotations

HOSTED_CALLS = 1024
SINGLE_MACHINE_CALLS = 4
# litellm provider prefixes of model servers that run on one machine (their model
# strings always carry the prefix, so no litellm lookup is needed to tell).
SINGLE_MACHINE_PROVIDERS = frozenset({"ollama", "ollama_chat", "lm_studio", "llamafile"})


def default_max_calls(model: str) -> int:
    """The in-flight cap for ``model`` when the config leaves it to the provider."""
    provider, sep, _ = model.partition("/")
    if sep and provider in SINGLE_MACHINE_PROVIDERS:
        return SINGLE_MACHINE_CALLS
    return HOSTED_CALLS
