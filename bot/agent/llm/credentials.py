"""Is a model usable at all? Provider and credential checks, with the fix in the message.

A missing key or an unknown provider is a configuration mistake, not an outage: it
must fail at once, before any network call, with a message naming the settings to
change (:data:`CONFIGURE_HINT`), instead of being retried like a flaky provider.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from bot.errors import CredentialsRejectedError, ModelNotConfiguredError

log = logging.getLogger(__name__)

CONFIGURE_HINT = (
    "Set llm.model, llm.api_key and llm.api_base in bot.toml, or the environment "
    "variables BOT_LLM__MODEL, BOT_LLM__API_KEY and BOT_LLM__API_BASE "
    "(or the provider's usual variable, such as {env})."
)


def check_configured(litellm: Any, model: str, *, api_base: str, api_key: str) -> None:
    """Fail fast, without a network call, on an unknown provider or a missing key.

    Also runs when only ``api_base`` is set: the OpenAI client refuses to send a
    request without a key, and litellm reports that as a retryable HTTP 500.
    """
    try:
        _, _, _, default_base = litellm.get_llm_provider(model, api_base=api_base or None)
    except Exception as exc:
        raise ModelNotConfiguredError(
            f"Model {model!r} names no known provider (use e.g. 'openai/gpt-4o-mini'). "
            + CONFIGURE_HINT.format(env="OPENAI_API_KEY")
        ) from exc
    missing: list[str] = []
    if not api_key:
        try:
            env = litellm.validate_environment(model, api_base=api_base or None)
        except Exception:
            log.debug("validate_environment failed for %s", model, exc_info=True)
            env = {}
        missing = [
            k
            for k in env.get("missing_keys") or ()
            if not ((default_base or api_base) and k.endswith("_API_BASE"))
        ]
    if missing:
        placeholder = (
            " A local server that ignores keys still needs a placeholder, "
            'e.g. llm.api_key = "none".'
            if api_base
            else ""
        )
        raise ModelNotConfiguredError(
            f"No credentials for model {model!r} (missing {', '.join(missing)}). "
            + CONFIGURE_HINT.format(env=missing[0])
            + placeholder
        )


def credentials_rejected(
    litellm: Any, model: str, exc: BaseException, redact: Callable[[str], str]
) -> CredentialsRejectedError:
    """The error for a provider that refused the key; ``redact`` masks the key in it."""
    env = _provider_key_env(litellm, model)
    return CredentialsRejectedError(
        f"The provider rejected the credentials for model {model!r} "
        f"({redact(_first_line(exc))}). " + CONFIGURE_HINT.format(env=env),
        env,
    )


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
