"""``bot doctor`` for Telegram: ``getMe`` with the configured token and API root."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.ops.checks import Check, HttpProblem, failed, get_json, ok
from channels.telegram.settings import TelegramSettings

if TYPE_CHECKING:  # the settings models import this; aiohttp waits for a check
    import aiohttp


async def check_telegram(http: aiohttp.ClientSession, tg: TelegramSettings) -> Check:
    token = tg.token.get_secret_value()
    name, fix_token = "telegram", "set channels.telegram.token to the token from @BotFather"
    try:
        status, body = await get_json(http, "POST", f"{tg.base_url}{token}/getMe")
    except HttpProblem as exc:
        return failed(
            name, f"{tg.base_url}: {exc}", "check channels.telegram.base_url and network access"
        )
    if status == 200 and isinstance(body, dict) and body.get("ok"):
        return ok(name, f"getMe: @{(body.get('result') or {}).get('username', '?')}")
    description = body.get("description", "") if isinstance(body, dict) else ""
    return failed(name, f"getMe: HTTP {status} {description}".strip(), fix_token)
