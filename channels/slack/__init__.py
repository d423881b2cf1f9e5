"""Slack through slack-bolt: Socket Mode and/or the HTTP Events API on the shared web app.

Importing this package is cheap (settings and the doctor check); the adapter and the
Slack SDKs are imported by the factory, only when the channel is configured.
"""

from __future__ import annotations

from pydantic import SecretStr

from channels.base import Channel, ChannelContext, ChannelSpec
from channels.slack.doctor import check_slack, check_slack_config
from channels.slack.settings import EXAMPLE, SlackSettings


def _create(settings: SlackSettings, ctx: ChannelContext) -> Channel:
    from channels.slack.adapter import SlackChannel

    # extras["slack"]: constructor tuning (timers), e.g. shrunk by tests.
    return SlackChannel(settings, state=ctx.state, shared=ctx.shared, **ctx.extras.get("slack", {}))


def _secrets(settings: SlackSettings) -> list[SecretStr]:
    return [settings.bot_token, settings.app_token, settings.signing_secret]


SPEC = ChannelSpec(
    name="slack",
    settings=SlackSettings,
    enabled=lambda s: bool(s.bot_token.get_secret_value()),
    factory=_create,
    secrets=_secrets,
    doctor=check_slack,
    config_check=check_slack_config,
    example=EXAMPLE,
    web_route=lambda s: (
        "the Events API (signing_secret)" if s.signing_secret.get_secret_value() else ""
    ),
)

__all__ = ["SPEC", "SlackSettings"]
