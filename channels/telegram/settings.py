"""``[channels.telegram]``: the Bot API token and root, access, polling or webhook."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, SecretStr, model_validator

from bot.config.section import ChannelSection


class TelegramSettings(ChannelSection):
    DEPRECATED: ClassVar[dict[str, str]] = {
        "webhook_port": "the webhook is served by the [web] app: set [web] port and host,"
        " and remove this key",
    }

    token: SecretStr = SecretStr("")
    base_url: str = "https://api.telegram.org/bot"
    allow_from: list[str] = Field(default=[])
    mode: Literal["polling", "webhook"] = "polling"
    webhook_url: str = ""
    webhook_port: int = Field(default=8443, ge=0, le=65535)
    webhook_secret: SecretStr = SecretStr("")
    group_policy: Literal["mention", "all"] = "mention"
    # Private chats preview with sendMessageDraft (Bot API 9.5) instead of a message
    # that is edited; the final answer is then posted as a new message.
    telegram_drafts: bool = False

    @model_validator(mode="after")
    def _webhook_complete(self) -> TelegramSettings:
        """Said at load (and by ``bot doctor``), not by a channel that fails to start."""
        missing = [
            name
            for name, value in (
                ("webhook_url", self.webhook_url),
                ("webhook_secret", self.webhook_secret.get_secret_value()),
            )
            if not value
        ]
        if self.token.get_secret_value() and self.mode == "webhook" and missing:
            raise ValueError(f"webhook mode needs {' and '.join(missing)}")
        return self


EXAMPLE = """\
[channels.telegram]
token = ""                                # empty: channel off
base_url = "https://api.telegram.org/bot" # Bot API root; the token is appended
allow_from = []                           # user ids or usernames; ["*"] = everyone
mode = "polling"             # "polling" (long polling) or "webhook"
webhook_url = ""             # webhook mode: the public HTTPS URL Telegram posts to
webhook_secret = ""          # webhook mode (required): checked on X-Telegram-Bot-Api-Secret-Token
group_policy = "mention"     # groups: "mention" = only when mentioned, replied to or commanded;
                             # "all" = every message
streaming = true             # false: no growing preview here, the final answer only ([streaming])
link_previews = false        # true: the platform previews/unfurls links in the bot's messages (its
                             # servers fetch them at once: a steered model could leak a chat)
telegram_drafts = false      # true: private chats preview as a draft (sendMessageDraft), and the
                             # final answer arrives as a new message; groups always edit
"""
