"""The HTTP checks behind ``bot doctor``: channel credentials and the weather service.

Plain aiohttp against each platform's configured root (Telegram ``getMe``, Slack
``auth.test``, Discord ``users/@me``), so no SDK is needed and the checks work against
compatible servers and the test fakes alike.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import aiohttp

from bot.config import Settings

CHECK_CITY = "Berlin"
HTTP_TIMEOUT_S = 10.0

Status = Literal["ok", "failed", "skipped"]


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


def ok(name: str, detail: str) -> Check:
    return Check(name, "ok", detail)


def failed(name: str, detail: str, fix: str) -> Check:
    return Check(name, "failed", detail, fix)


class HttpProblem(Exception):
    """The service could not be asked at all (refused, timed out, not JSON)."""


async def get_json(
    http: aiohttp.ClientSession,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, str] | None = None,
    timeout: float = HTTP_TIMEOUT_S,
) -> tuple[int, Any]:
    """(status, decoded JSON or None); transport failures become :class:`HttpProblem`."""
    try:
        async with http.request(
            method,
            url,
            headers=headers,
            params=params,
            timeout=aiohttp.ClientTimeout(total=timeout),
        ) as resp:
            raw = await resp.read()
            status = resp.status
    except TimeoutError:
        raise HttpProblem(f"no answer within {timeout:g} s") from None
    except aiohttp.ClientError as exc:
        raise HttpProblem(f"cannot connect ({type(exc).__name__}: {exc})") from None
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        if status != 200:
            return status, None
        raise HttpProblem(f"HTTP {status} but the answer is not JSON") from None


async def check_telegram(http: aiohttp.ClientSession, settings: Settings) -> Check:
    tg = settings.channels.telegram
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


async def check_slack(http: aiohttp.ClientSession, settings: Settings) -> Check:
    slack = settings.channels.slack
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


async def check_discord(http: aiohttp.ClientSession, settings: Settings) -> Check:
    discord = settings.channels.discord
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


async def check_weather(http: aiohttp.ClientSession, settings: Settings) -> Check:
    weather = settings.weather
    params = {"name": CHECK_CITY, "count": "1", "language": "en", "format": "json"}
    fix = "check weather.geocoding_url and outbound network access"
    try:
        status, body = await get_json(
            http, "GET", weather.geocoding_url, params=params, timeout=weather.timeout_s
        )
    except HttpProblem as exc:
        return failed("weather", f"{weather.geocoding_url}: {exc}", fix)
    results = body.get("results") if isinstance(body, dict) else None
    if status != 200 or not isinstance(results, list) or not results:
        return failed("weather", f"geocoding {CHECK_CITY}: HTTP {status}, no result", fix)
    first: Any = results[0]
    where = f"{first.get('latitude')}, {first.get('longitude')}" if isinstance(first, dict) else ""
    return ok("weather", f"geocoded {CHECK_CITY} ({where})")
