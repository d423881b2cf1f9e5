"""The configured channels, read through the registry's specs (no platform named here)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from pydantic import BaseModel

from bot.config.settings import Settings
from bot.ops.redaction import url_secrets
from channels.base import ChannelSpec
from channels.registry import SPECS


def channel_section(settings: Settings, name: str) -> BaseModel:
    """``[channels.<name>]`` as its package's settings model."""
    section: BaseModel = getattr(settings.channels, name)
    return section


def enabled_channels(settings: Settings) -> Iterator[tuple[ChannelSpec[Any], BaseModel]]:
    """Each platform whose section turns it on (a token is set), with that section."""
    for spec in SPECS:
        section = channel_section(settings, spec.name)
        if spec.enabled(section):
            yield spec, section


def allow_lists(settings: Settings) -> dict[str, list[str]]:
    """``allow_from`` of every platform, by channel name."""
    return {
        spec.name: list(getattr(channel_section(settings, spec.name), "allow_from", []))
        for spec in SPECS
    }


def secret_values(settings: Settings) -> list[str]:
    """Every configured secret's value (channels, the model keys, MCP env and headers),
    for redaction (which ignores placeholders: :func:`bot.ops.redaction.maskable`)."""
    media = settings.media
    secrets = [settings.llm.api_key, media.vision_api_key, media.transcription_api_key]
    for spec in SPECS:
        secrets += spec.secrets(channel_section(settings, spec.name))
    for server in settings.mcp.servers.values():
        secrets += server.secrets()
    values = [s.get_secret_value() for s in secrets]
    for server in settings.mcp.servers.values():
        values += url_secrets(server.url)  # a key in its query or path, a password in it
    values += store_passwords(settings.store.url.get_secret_value())
    return sorted({v for v in values if v}, key=len, reverse=True)


def store_passwords(url: str) -> list[str]:
    """The passwords a store URL carries: in its user info, or in its query string as
    ``password`` or ``sslpassword`` (asyncpg and libpq take both there)."""
    parts = urlsplit(url)
    query = [v for k, v in parse_qsl(parts.query) if k in ("password", "sslpassword")]
    return ([parts.password] if parts.password else []) + query
