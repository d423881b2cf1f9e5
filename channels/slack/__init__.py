"""Slack (slack-bolt): settings and the doctor check; the adapter is being built."""

from __future__ import annotations

from pydantic import SecretStr

from bot.errors import ChannelError
from channels.base import Channel, ChannelContext, ChannelSpec
from channels.slack.doctor import check_slack
from channels.slack.settings import EXAMPLE, SlackSettings


def _create(settings: SlackSettings, ctx: ChannelContext) -> Channel:
    raise ChannelError("channel slack is configured but not available in this build")


def _secrets(settings: SlackSettings) -> list[SecretStr]:
    return [settings.bot_token, settings.app_token, settings.signing_secret]


SPEC = ChannelSpec(
    name="slack",
    settings=SlackSettings,
    enabled=lambda s: bool(s.bot_token.get_secret_value()),
    factory=_create,
    secrets=_secrets,
    doctor=check_slack,
    example=EXAMPLE,
)

__all__ = ["SPEC", "SlackSettings"]
