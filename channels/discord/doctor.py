"""``bot doctor`` for Discord: ``users/@me`` with the bot token against ``api_base``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.ops.checks import Check, HttpProblem, failed, get_json, ok
from channels.discord.settings import DiscordSettings

if TYPE_CHECKING:  # the settings models import this; aiohttp waits for a check
    import aiohttp


async def check_discord(http: aiohttp.ClientSession, discord: DiscordSettings) -> Check:
    url = discord.api_base.rstrip("/") + "/users/@me"
    auth = {"Authorization": f"Bot {discord.token.get_secret_value()}"}
    try:
        status, body = await get_json(http, "GET", url, headers=auth)
    except HttpProblem as exc:
        return failed("discord", f"{url}: {exc}", "check channels.discord.api_base")
    if status == 200 and isinstance(body, dict) and body.get("id"):
        return ok("discord", f"users/@me: {body.get('username', '?')}")
    message = body.get("message", "") if isinstance(body, dict) else ""
    return failed(
        "discord",
        f"users/@me: HTTP {status} {message}".strip(),
        "set channels.discord.token to the bot token from the Developer Portal",
    )
