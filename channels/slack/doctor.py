"""``bot doctor`` for Slack: ``auth.test`` with the bot token against ``api_url``, and
``apps.connections.open`` with the app token when Socket Mode is configured (a bot token
that works with an app token that does not would leave the socket down for good)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bot.ops.checks import Check, HttpProblem, failed, get_json, ok
from channels.slack.settings import SlackSettings

if TYPE_CHECKING:  # the settings models import this; aiohttp waits for a check
    import aiohttp

NAME = "slack"


async def _call(
    http: aiohttp.ClientSession, slack: SlackSettings, method: str, token: str
) -> tuple[int, Any]:
    url = slack.api_url.rstrip("/") + "/" + method
    return await get_json(http, "POST", url, headers={"Authorization": f"Bearer {token}"})


def _error(status: int, body: Any) -> str:
    return str(body.get("error", "")) if isinstance(body, dict) else f"HTTP {status}"


def check_slack_config(slack: SlackSettings) -> Check | None:
    """A bot token with no way to receive (the channel fails at start), or None: needs
    no network, so ``bot doctor --offline`` says it too."""
    if slack.app_token.get_secret_value() or slack.signing_secret.get_secret_value():
        return None
    return failed(
        NAME,
        "neither app_token (Socket Mode) nor signing_secret (HTTP events) is set",
        "set channels.slack.app_token (xapp-...) or channels.slack.signing_secret",
    )


async def check_slack(http: aiohttp.ClientSession, slack: SlackSettings) -> Check:
    app_token = slack.app_token.get_secret_value()
    if (problem := check_slack_config(slack)) is not None:
        return problem
    method = "auth.test"
    try:
        status, body = await _call(http, slack, method, slack.bot_token.get_secret_value())
        if not (status == 200 and isinstance(body, dict) and body.get("ok")):
            return failed(
                NAME,
                f"auth.test: HTTP {status} {_error(status, body)}".strip(),
                "set channels.slack.bot_token to the app's Bot User OAuth Token (xoxb-...)",
            )
        detail = f"auth.test: {body.get('user', '?')} in {body.get('team', '?')}"
        if not app_token:
            return ok(NAME, detail + " (HTTP events)")
        method = "apps.connections.open"
        status, opened = await _call(http, slack, method, app_token)
    except HttpProblem as exc:
        return failed(NAME, f"{slack.api_url}: {exc}", "check channels.slack.api_url")
    except Exception as exc:  # the HTTP client's own, unwrapped: a row, not a traceback
        return failed(
            NAME,
            f"{method}: {type(exc).__name__}: {exc}",
            "check channels.slack.bot_token, app_token and api_url",
        )
    if status == 200 and isinstance(opened, dict) and opened.get("ok"):
        return ok(NAME, detail + " (Socket Mode)")
    return failed(
        NAME,
        f"apps.connections.open: HTTP {status} {_error(status, opened)}".strip(),
        "set channels.slack.app_token to an App-Level Token (xapp-...) "
        "with connections:write, and enable Socket Mode",
    )
