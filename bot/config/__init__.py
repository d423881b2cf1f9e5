"""Configuration: the settings models (:mod:`bot.config.settings`) and their loader.

Names resolve lazily (PEP 562) because channel packages import
:mod:`bot.config.section` while :mod:`bot.config.settings` imports the channel
registry to build ``[channels.*]``: eager re-exports here would make that a cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.config.settings import (
        DEFAULT_CONFIG_NAME,
        AgentSettings,
        ContextSettings,
        LLMSettings,
        MemorySettings,
        RemindersSettings,
        RetentionSettings,
        Settings,
        StreamingSettings,
        WeatherSettings,
        WebSettings,
        load_settings,
        resolve_config_path,
    )

__all__ = [
    "DEFAULT_CONFIG_NAME",
    "AgentSettings",
    "ContextSettings",
    "LLMSettings",
    "MemorySettings",
    "RemindersSettings",
    "RetentionSettings",
    "Settings",
    "StreamingSettings",
    "WeatherSettings",
    "WebSettings",
    "load_settings",
    "resolve_config_path",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from bot.config import settings

        return getattr(settings, name)
    raise AttributeError(f"module 'bot.config' has no attribute {name!r}")
