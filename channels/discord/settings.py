"""``[channels.discord]``: the bot token, REST and gateway roots, access, group policy."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr

from bot.config.section import ChannelSection


class DiscordSettings(ChannelSection):
    token: SecretStr = SecretStr("")
    api_base: str = "https://discord.com/api/v10"
    gateway_url: str = ""
    allow_from: list[str] = Field(default=[])
    group_policy: Literal["mention", "all"] = "mention"


EXAMPLE = """\
[channels.discord]
token = ""                   # bot token from the Developer Portal; empty: channel off
api_base = "https://discord.com/api/v10" # REST root
gateway_url = ""             # empty: the one Discord returns
allow_from = []              # user ids; ["*"] = everyone
streaming = true             # false: no growing preview here, the final answer only ([streaming])
link_previews = false        # true: the platform previews/unfurls links in the bot's messages (its
                             # servers fetch them at once: a steered model could leak a chat)
group_policy = "mention"     # servers: "mention" = only when mentioned, replied to or in a
                             # thread the bot is part of; "all" = every message it can read
"""
