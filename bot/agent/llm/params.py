"""What a model's requests carry besides the messages and tools: the answer's cap and,
for Claude, where its prompt cache may end.

Anthropic's Messages API requires ``max_tokens``. Left unset, litellm sends the model's
whole output limit from its map (64,000 for claude-sonnet-4-5), or 128,000 for a Claude
name its map lacks (a dated or -latest alias, a proxy's own name), which the API refuses
for every model allowed fewer: each message then failed. Newer models also refuse a
prompt and ``max_tokens`` together over the window, while the governor kept only
``[context] reserve_tokens`` free. So for the providers that require it (``anthropic/``,
and Claude on ``bedrock/`` and ``vertex_ai/``) the cap is chosen here: ``[llm]
max_output_tokens`` when set, else litellm's figure for a model in its map, else
:data:`DEFAULT_ANSWER_TOKENS`; and the governor keeps that many tokens free. Any other
provider gets ``max_tokens`` only when the setting asks for it: a local server with a
small window may refuse a cap it cannot hold.

Anthropic caches a prompt's prefix only up to a block marked with ``cache_control``, and
nothing else marks one: a Claude request asks litellm to mark the tools (the last one),
the system message and the last message (:data:`CACHE_POINTS`, three of the four marks
Anthropic allows). Consecutive requests repeat the one before up to its last message, so
the next request reads that prefix from the cache (at a tenth of the input price) rather
than paying for it again. Claude on a cloud is marked only where litellm's map says that
cloud caches the model; other providers' requests go out unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.agent.llm.setup_executor import provider_of

DEFAULT_ANSWER_TOKENS = 8_192  # every Claude model since 3.5 Sonnet writes at least this
CLAUDE_HOSTS = frozenset({"bedrock", "vertex_ai"})  # their Claude takes Anthropic's rules
# litellm's injection points: the last tool, the system message, the last message.
CACHE_POINTS: tuple[dict[str, Any], ...] = (
    {"location": "tool_config"},
    {"location": "message", "role": "system"},
    {"location": "message", "index": -1},
)


def claude_family(litellm: Any, model: str) -> bool:
    """Claude through Anthropic's API or a cloud's: ``max_tokens`` is required."""
    provider = provider_of(litellm, model)
    return provider == "anthropic" or (provider in CLAUDE_HOSTS and "claude" in model.lower())


def answer_tokens(litellm: Any, model: str, configured: int) -> int | None:
    """The ``max_tokens`` requests to ``model`` carry; None: left to the provider."""
    if configured > 0:
        return configured
    if not claude_family(litellm, model):
        return None
    return mapped_output(litellm, model) or DEFAULT_ANSWER_TOKENS


def mapped_output(litellm: Any, model: str) -> int | None:
    """The model's output limit in litellm's map, None when the map does not say."""
    try:
        info = litellm.get_model_info(model)
    except Exception:  # unknown to the map: litellm raises
        return None
    value = info.get("max_output_tokens") if isinstance(info, Mapping) else None
    return value if isinstance(value, int) and value > 0 else None


def caches_prompts(litellm: Any, model: str) -> bool:
    """Claude on Anthropic's API (or a server speaking it), or on a cloud that caches it."""
    if provider_of(litellm, model) == "anthropic":
        return True
    if not claude_family(litellm, model):
        return False
    try:
        return bool(litellm.utils.supports_prompt_caching(model=model))
    except Exception:  # unknown to litellm's map: not marked, as before
        return False


def request_params(litellm: Any, model: str, max_output_tokens: int) -> dict[str, Any]:
    """The keyword arguments every request to ``model`` adds to ``acompletion``'s."""
    params: dict[str, Any] = {}
    tokens = answer_tokens(litellm, model, max_output_tokens)
    if tokens is not None:
        params["max_tokens"] = tokens
    if caches_prompts(litellm, model):
        params["cache_control_injection_points"] = CACHE_POINTS
    return params
