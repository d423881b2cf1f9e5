"""``get_weather``: a one-day forecast from Open-Meteo (geocoding, then the daily forecast).

The model gets one readable line, never raw JSON, so it cannot misread units or codes,
and every expected failure (unknown place, bad date, a dead or slow service) is a
``ToolError`` it can explain to the user. :func:`fetch_weather` is shared with the
``/weather`` command (:func:`weather_command`), which must work when no model is up.
The Open-Meteo HTTP client itself lives in :mod:`tools.open_meteo`; this module checks
the user's input (city, date window) and adapts the client to the tool and command.
"""

from __future__ import annotations

import asyncio
import calendar
import logging
import re
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any, ClassVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import aiohttp

from bot.agent.toolbox import ToolContext, WeatherAccess
from bot.config import Settings, WeatherSettings
from bot.errors import ToolError
from bot.handlers.commands import Command
from bot.messages import InboundMessage
from tools.base import Tool
from tools.open_meteo import (
    DAILY_VARIABLES,
    FORECAST_DAYS,
    PAST_DAYS,
    WMO_WORDS,
    Place,
    describe_code,
    forecast_line,
    geocode,
    summarize,
)

# Re-exported: callers and tests import the client's public names from here too.
__all__ = [
    "COMMAND_USAGE",
    "DAILY_VARIABLES",
    "FORECAST_DAYS",
    "PAST_DAYS",
    "WMO_WORDS",
    "OpenMeteoWeather",
    "Place",
    "WeatherTool",
    "describe_code",
    "fetch_weather",
    "geocode",
    "parse_command_args",
    "resolve_date",
    "summarize",
    "weather_command",
]

log = logging.getLogger(__name__)

COMMAND_USAGE = "/weather <city> [YYYY-MM-DD | today | tomorrow | monday...]"

_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_LIKE = re.compile(r"\d{4}-\S*")  # a command argument meant as a date, valid or not
# Days said in words ("/weather Berlin tomorrow" looked up a place named "Berlin tomorrow"),
# in the user's zone: how many days from today, or the weekday (Monday 0) next to come.
_RELATIVE_DAYS = {"yesterday": -1, "today": 0, "tonight": 0, "tomorrow": 1}
_WEEKDAYS = {name.lower(): n for n, name in enumerate(calendar.day_name)}

HttpGetter = Callable[[], aiohttp.ClientSession | None]
TimezoneGetter = Callable[[InboundMessage], Awaitable[str]]


def _zone(tz: str) -> ZoneInfo:
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        log.warning("unknown time zone %r; using UTC for the weather date", tz)
        return ZoneInfo("UTC")


def resolve_date(text: str | None, tz: str, now: datetime | None = None) -> date:
    """The requested day, checked against the forecast window before any request is made."""
    today = (now or datetime.now(UTC)).astimezone(_zone(tz)).date()
    if text is None or not text.strip():
        return today
    text = text.strip()
    day = _day_in_words(text.lower(), today) or _iso_day(text, today)
    first = today - timedelta(days=PAST_DAYS)
    last = today + timedelta(days=FORECAST_DAYS - 1)
    if day < first:
        raise ToolError(
            f"{day.isoformat()} is in the past: forecasts are available from "
            f"{first.isoformat()} to {last.isoformat()}"
        )
    if day > last:
        raise ToolError(
            f"{day.isoformat()} is too far ahead: forecasts reach {FORECAST_DAYS} days ahead "
            f"(today is {today.isoformat()}, the last day is {last.isoformat()})"
        )
    return day


def _day_in_words(text: str, today: date) -> date | None:
    if text in _RELATIVE_DAYS:
        return today + timedelta(days=_RELATIVE_DAYS[text])
    if text in _WEEKDAYS:  # today when it is that day
        return today + timedelta(days=(_WEEKDAYS[text] - today.weekday()) % 7)
    return None


def _iso_day(text: str, today: date) -> date:
    if not _DATE_RE.fullmatch(text):
        raise ToolError(
            f"invalid date {text!r}: use YYYY-MM-DD (e.g. {today.isoformat()}), today, "
            "tomorrow or a weekday"
        )
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ToolError(f"invalid date {text!r}: no such day (use YYYY-MM-DD)") from None


async def fetch_weather(
    http: aiohttp.ClientSession | None,
    settings: Settings | WeatherSettings,
    city: str,
    date: str | None,
    tz: str,
    *,
    now: datetime | None = None,
) -> str:
    """The forecast line for ``city`` on ``date`` (default: today in ``tz``).

    Raises ``ToolError`` with a user-readable message for every expected failure. Without
    a shared ``http`` session a short-lived one is opened for this call.
    """
    weather = settings.weather if isinstance(settings, Settings) else settings
    city = city.strip()
    if not city:
        raise ToolError("city is empty: name a city, e.g. 'Paris' or 'Paris, France'")
    day = resolve_date(date, tz, now)
    if http is not None:
        return await forecast_line(http, weather, city, day)
    async with aiohttp.ClientSession() as session:
        return await forecast_line(session, weather, city, day)


class WeatherTool(Tool):
    """The model's weather tool; URLs and timeout come only from ``[weather]`` settings."""

    name = "get_weather"
    description = (
        "One day's weather forecast for a city, as one line: conditions, min/max "
        "temperature, precipitation chance."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "city": {
                "type": "string",
                "minLength": 1,
                "description": "A place name, optionally with its country ('Paris, France').",
            },
            "date": {
                "type": "string",
                "format": "date",
                "description": "YYYY-MM-DD, yesterday to 15 days ahead; default today.",
            },
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    read_only = True

    async def execute(
        self, ctx: ToolContext, *args: Any, city: str, date: str | None = None, **kwargs: Any
    ) -> str:
        if ctx.services.weather is None:
            raise ToolError("the weather service is not available in this daemon")
        return await ctx.services.weather.forecast(city, date, ctx.timezone)


class OpenMeteoWeather:
    """The weather service tools and ``/weather`` share (``WeatherAccess``).

    ``http`` is read at call time: the daemon's shared session exists only once it runs
    (None: a short-lived session per call). At most ``max_concurrent_requests`` lookups
    run at once, so a burst of tool calls queues here instead of hammering the service.
    """

    def __init__(self, settings: WeatherSettings, http: HttpGetter | None = None) -> None:
        self._settings = settings
        self._http = http
        self._slots = asyncio.Semaphore(settings.max_concurrent_requests)

    async def forecast(self, city: str, date: str | None, tz: str) -> str:
        async with self._slots:
            session = self._http() if self._http is not None else None
            return await fetch_weather(session, self._settings, city, date, tz)


def parse_command_args(args: str) -> tuple[str, str | None]:
    """``"New York 2026-05-01"`` -> ``("New York", "2026-05-01")``, ``"Berlin tomorrow"``
    -> ``("Berlin", "tomorrow")``; the date is optional."""
    words = args.split()
    last = words[-1].lower() if words else ""
    if len(words) >= 2 and (
        _DATE_LIKE.fullmatch(last) or last in _RELATIVE_DAYS or last in _WEEKDAYS
    ):
        return " ".join(words[:-1]), words[-1]
    return " ".join(words), None


def weather_command(weather: WeatherAccess, timezone_for: TimezoneGetter) -> Command:
    """The ``/weather`` command; ``timezone_for`` gives the sender's zone."""

    async def run(msg: InboundMessage, args: str) -> str:
        city, day = parse_command_args(args)
        if not city:
            return f"Usage: {COMMAND_USAGE}, e.g. /weather Paris, France"
        tz = await timezone_for(msg)
        try:
            return await weather.forecast(city, day, tz)
        except ToolError as exc:
            return f"Error: {str(exc).removeprefix('Error:').strip()}"

    return Command("weather", COMMAND_USAGE, "weather forecast, no model needed", run)
