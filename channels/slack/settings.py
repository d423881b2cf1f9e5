"""``[channels.slack]``: tokens, the HTTP Events API route, the Web API root, access."""

from __future__ import annotations

from pydantic import Field, SecretStr

from bot.config.section import Section


class SlackSettings(Section):
    bot_token: SecretStr = SecretStr("")
    app_token: SecretStr = SecretStr("")
    signing_secret: SecretStr = SecretStr("")
    http_port: int = Field(default=3000, ge=0, le=65535)
    http_path: str = "/slack/events"
    api_url: str = "https://slack.com/api/"
    allow_from: list[str] = Field(default_factory=list)


EXAMPLE = """\
[channels.slack]
bot_token = ""               # Bot User OAuth Token (xoxb-...); empty: channel off
app_token = ""               # set: Socket Mode; else HTTP Events API with signing_secret
signing_secret = ""          # HTTP Events API: verifies Slack's request signatures
http_port = 3000             # HTTP Events API: local port Slack posts to
http_path = "/slack/events"  # where the HTTP Events API posts
api_url = "https://slack.com/api/" # Web API root (a Slack-compatible server for tests)
allow_from = []              # user ids; ["*"] = everyone
"""
