"""``bot doctor`` for Slack: ``auth.test`` with the bot token against ``api_url``."""

from __future__ import annotations

import aiohttp

from bot.ops.checks import Check, HttpProblem, failed, get_json, ok
from channels.slack.settings import SlackSettings


async def check_slack(http: aiohttp.ClientSession, slack: SlackSettings) -> Check:
    name = "slack"
    if not (slack.app_token.get_secret_value() or slack.signing_secret.get_secret_value()):
        return failed(
            name,
            "neither app_token (Socket Mode) nor signing_secret (HTTP events) is set",
            "set channels.slack.app_token (xapp-...) or channels.slack.signing_secret",
        )
    url = slack.api_url.rstrip("/") + "/auth.test"
    auth = {"Authorization": f"Bearer {slack.bot_token.get_secret_value()}"}
    try:
        status, body = await get_json(http, "POST", url, headers=auth)
    except HttpProblem as exc:
        return failed(name, f"{url}: {exc}", "check channels.slack.api_url")
    if status == 200 and isinstance(body, dict) and body.get("ok"):
        return ok(name, f"auth.test: {body.get('user', '?')} in {body.get('team', '?')}")
    error = body.get("error", "") if isinstance(body, dict) else ""
    return failed(
        name,
        f"auth.test: HTTP {status} {error}".strip(),
        "set channels.slack.bot_token to the app's Bot User OAuth Token (xoxb-...)",
    )
