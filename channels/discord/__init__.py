"""Discord through discord.py: a gateway client for DMs, server channels and threads.

Importing this package is cheap (settings and the doctor check); the adapter and its
SDK are imported by the factory, only when the channel is configured.
"""

from __future__ import annotations

from pydantic import SecretStr

from channels.base import Channel, ChannelContext, ChannelSpec
from channels.discord.doctor import check_discord
from channels.discord.settings import EXAMPLE, DiscordSettings


def _create(settings: DiscordSettings, ctx: ChannelContext) -> Channel:
    from channels.discord.adapter import DiscordChannel

    # extras["discord"]: constructor tuning (timers), e.g. shrunk by tests.
    return DiscordChannel(
        settings, state=ctx.state, standby=ctx.standby, **ctx.extras.get("discord", {})
    )


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
