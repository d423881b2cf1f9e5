"""Slack's refusals sorted for the daemon: for good, rate limited, or worth a retry."""

from __future__ import annotations

from slack_sdk.errors import SlackApiError

from bot.errors import ChannelError, ChatGone, DeliveryRejected
from channels.slack.client import header

# Errors after which sending the same message again cannot succeed.
PERMANENT = frozenset(
    {
        "channel_not_found", "not_in_channel", "is_archived", "msg_too_long", "no_text",
        "invalid_auth", "not_authed", "account_inactive", "token_revoked", "missing_scope",
        "restricted_action", "cannot_reply_to_message", "invalid_blocks", "user_not_found",
        "invalid_metadata_format", "invalid_metadata_schema", "team_access_not_granted",
    }
)  # fmt: skip
# Of those, the ones that say the channel itself refuses the bot for good (removed from
# it, archived, deleted, the bot's account deactivated): its repeats are ended.
CHAT_GONE = frozenset({"channel_not_found", "not_in_channel", "is_archived", "account_inactive"})


class SlackRateLimited(ChannelError):
    """Slack asked to wait longer than the sender waits in place; retry after that."""

    def __init__(self, retry_after_s: float) -> None:
        super().__init__(f"Slack rate limit: retry in {retry_after_s:g} s")
        self.retry_after_s = retry_after_s


def retry_after_s(exc: SlackApiError) -> float | None:
    """Seconds to wait when ``exc`` is a 429, else None."""
    if exc.response is None or exc.response.status_code != 429:
        return None
    value = header(exc.response.headers, "Retry-After")
    try:
        return max(0.0, float(value)) if value is not None else 1.0
    except ValueError:
        return 1.0


def api_error(exc: SlackApiError, what: str) -> ChannelError:
    error = error_of(exc)
    if error in CHAT_GONE:
        return ChatGone(f"Slack refused {what}: {error}")
    if error in PERMANENT:
        return DeliveryRejected(f"Slack refused {what}: {error}")
    status = exc.response.status_code if exc.response is not None else "?"
    return ChannelError(f"Slack {what} failed: HTTP {status} {error}".strip())


def error_of(exc: SlackApiError) -> str:
    """Slack's error code (``ratelimited``, ``message_not_found``...); '' without one."""
    return str(exc.response.get("error", "")) if exc.response is not None else ""
