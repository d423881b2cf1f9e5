"""Telegram through python-telegram-bot: long polling or a webhook on the shared web app.

Importing this package is cheap (settings and the doctor check); the adapter and its
SDK are imported by the factory, only when the channel is configured.
"""

from __future__ import annotations

from pydantic import SecretStr

from channels.base import Channel, ChannelContext, ChannelSpec, SetupQuestion
from channels.telegram.doctor import check_telegram
from channels.telegram.settings import EXAMPLE, TelegramSettings


def _create(settings: TelegramSettings, ctx: ChannelContext) -> Channel:
    from channels.telegram.adapter import TelegramChannel

    return TelegramChannel(settings, state=ctx.state, standby=ctx.standby)


def _secrets(settings: TelegramSettings) -> list[SecretStr]:
    return [settings.token, settings.webhook_secret]


SPEC = ChannelSpec(
    name="telegram",
    settings=TelegramSettings,
    enabled=lambda s: bool(s.token.get_secret_value()),
    factory=_create,
    secrets=_secrets,
    doctor=check_telegram,
    example=EXAMPLE,
    web_route=lambda s: 'a webhook (mode = "webhook")' if s.mode == "webhook" else "",
    setup=(
        SetupQuestion("Telegram bot token, from @BotFather (empty: no Telegram)", "token", True),
        SetupQuestion(
            "Your Telegram user id, from @userinfobot (empty: approve yourself by pairing)",
            admin=True,
        ),
    ),
)

__all__ = ["SPEC", "TelegramSettings"]
