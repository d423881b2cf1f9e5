"""Settings, the example section, the spec's factory and the doctor check for Discord."""

from __future__ import annotations

import tomllib
from datetime import timedelta
from pathlib import Path

import aiohttp
import pytest
from pydantic import SecretStr, ValidationError

from channels.base import (
    ChannelContext,
    SupportsDownload,
    SupportsEdit,
    SupportsReactions,
    SupportsTyping,
    SupportsUpload,
)
from channels.discord import SPEC, DiscordSettings
from channels.discord.adapter import DiscordChannel
from channels.discord.doctor import check_discord
from channels.discord.settings import EXAMPLE
from tests.fakes import discord_api

fake_discord = discord_api.fake_discord


class _NoState:
    async def get(self, key: str, default: str | None = None) -> str | None:
        return default

    async def set(self, key: str, value: str, *, keep_for: timedelta | None = None) -> None:
        return None


def test_example_parses_to_the_defaults():
    section = tomllib.loads(EXAMPLE)["channels"]["discord"]
    settings = DiscordSettings(**section)
    assert settings == DiscordSettings()
    assert settings.group_policy == "mention"
    with pytest.raises(ValidationError):
        DiscordSettings.model_validate({"group_policy": "some"})


def test_spec_builds_the_adapter_with_its_capabilities(tmp_path: Path):
    settings = DiscordSettings(token=SecretStr("t"))
    assert SPEC.enabled(settings) and not SPEC.enabled(DiscordSettings())
    assert [s.get_secret_value() for s in SPEC.secrets(settings)] == ["t"]
    channel = SPEC.factory(settings, ChannelContext(state=_NoState(), data_dir=tmp_path))
    assert isinstance(channel, DiscordChannel)
    for capability in (SupportsTyping, SupportsEdit, SupportsReactions, SupportsUpload):
        assert isinstance(channel, capability)
    assert isinstance(channel, SupportsDownload)
    assert not channel.connected


async def test_doctor_against_the_fake(fake_discord):
    good = DiscordSettings(token=SecretStr(fake_discord.token), api_base=fake_discord.api_base)
    bad = DiscordSettings(token=SecretStr("wrong"), api_base=fake_discord.api_base)
    async with aiohttp.ClientSession() as http:
        passed = await check_discord(http, good)
        refused = await check_discord(http, bad)
    assert passed.status == "ok" and "testbot" in passed.detail
    assert refused.status == "failed" and "401" in refused.detail
    assert "token" in refused.fix
