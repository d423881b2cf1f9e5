"""Discord (discord.py): settings and the doctor check; the adapter is being built."""

from __future__ import annotations

from pydantic import SecretStr

from bot.errors import ChannelError
from channels.base import Channel, ChannelContext, ChannelSpec
from channels.discord.doctor import check_discord
from channels.discord.settings import EXAMPLE, DiscordSettings


def _create(settings: DiscordSettings, ctx: ChannelContext) -> Channel:
    raise ChannelError("channel discord is configured but not available in this build")


def _secrets(settings: DiscordSettings) -> list[SecretStr]:
    return [settings.token]


SPEC = ChannelSpec(
    name="discord",
    settings=DiscordSettings,
    enabled=lambda s: bool(s.token.get_secret_value()),
    factory=_create,
    secrets=_secrets,
    doctor=check_discord,
    example=EXAMPLE,
)

__all__ = ["SPEC", "DiscordSettings"]
