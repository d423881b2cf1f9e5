"""Telling litellm about a model its bundled cost map does not know.

After every call litellm prices the response. For a model missing from its map (a
self-hosted or brand-new model) that lookup walks every provider and region variant
and fails, about a quarter of a call's CPU, for a price of "unknown" every time.
Registering the model once at zero cost makes the lookup hit: the same answer
(nothing to bill) without the search. Only the price is registered, never a context
window, so the governor's budget still comes from ``[context]`` for such a model.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

_FREE = {
    "input_cost_per_token": 0.0,
    "output_cost_per_token": 0.0,
    "cache_creation_input_token_cost": 0.0,
    "cache_read_input_token_cost": 0.0,
}


def is_mapped(litellm: Any, model: str) -> bool:
    try:
        litellm.get_model_info(model)
    except Exception:  # litellm raises for a model its map does not hold
        return False
    return True


def map_unknown_model(litellm: Any, model: str) -> bool:
    """Register ``model`` at zero cost when litellm's map lacks it; True when it did.

    A failure here only costs the saving, never a call: it is logged and ignored."""
    if is_mapped(litellm, model):
        return False
    try:
        provider = litellm.get_llm_provider(model)[1]
        litellm.register_model({model: {**_FREE, "litellm_provider": provider, "mode": "chat"}})
    except Exception:
        log.debug("could not register %s in litellm's cost map", model, exc_info=True)
        return False
    log.info("model %s is not in litellm's cost map: registered at zero cost", model)
    return True
