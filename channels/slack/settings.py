"""``[channels.slack]``: tokens, the HTTP Events API route, the Web API root, access."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, SecretStr

from bot.config.section import ChannelSection


class SlackSettings(ChannelSection):
    bot_token: SecretStr = SecretStr("")
    app_token: SecretStr = SecretStr("")
    signing_secret: SecretStr = SecretStr("")
    DEPRECATED: ClassVar[dict[str, str]] = {
        "http_port": "the Events API route is served by the [web] app at http_path: set"
        " [web] port and host, and remove this key",
    }

    http_port: int = Field(default=3000, ge=0, le=65535)
    http_path: str = "/slack/events"
    api_url: str = "https://slack.com/api/"
    allow_from: list[str] = Field(default=[])
    group_policy: Literal["mention", "all"] = "mention"


EXAMPLE = """\
[channels.slack]
bot_token = ""               # Bot User OAuth Token (xoxb-...); empty: channel off
app_token = ""               # App-Level Token (xapp-..., connections:write): Socket Mode
signing_secret = ""          # set: HTTP Events API on the [web] app at http_path
http_path = "/slack/events"  # HTTP Events API: the Request URL path on the [web] server
api_url = "https://slack.com/api/" # Web API root (a Slack-compatible server for tests)
allow_from = []              # user ids (U...); ["*"] = everyone
streaming = true             # false: no growing preview here, the final answer only ([streaming])
link_previews = false        # true: the platform previews/unfurls links in the bot's messages (its
                             # servers fetch them at once: a steered model could leak a chat)
group_policy = "mention"     # channels: "mention" = only when @mentioned (and in threads
                             # the bot joined); "all" = every message. DMs always answer.
"""
