"""An Open-Meteo client: geocode a place, fetch its daily forecast, say it in one line.

Kept apart from :mod:`tools.weather` (the tool and the ``/weather`` command) so the
HTTP details, the WMO code table and the answer parsing can be read and tested on
their own. It defines no ``Tool``, so the tool loader finds nothing here.
Every expected failure (unknown place, a dead, slow or confused service) is a
``ToolError`` whose message a user can read.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

import aiohttp

from bot.config import WeatherSettings
from bot.errors import ToolError
from tools.web.reasons import status_text, wait_advice

log = logging.getLogger(__name__)

FORECAST_DAYS = 16  # Open-Meteo's forecast_days maximum: today and the 15 days after it
PAST_DAYS = 1  # yesterday stays allowed: the user's "today" may be the place's tomorrow
DAILY_VARIABLES = (
    "weather_code",
    "temperature_2m_max",
    "temperature_2m_min",
    "precipitation_probability_max",
)

# WMO weather interpretation codes, as documented by Open-Meteo.
WMO_WORDS: dict[int, str] = {
    0: "clear sky",
    1: "mainly clear",
    2: "partly cloudy",
    3: "overcast",
    45: "fog",
    48: "depositing rime fog",
    51: "light drizzle",
    53: "moderate drizzle",
    55: "dense drizzle",
    56: "light freezing drizzle",
    57: "dense freezing drizzle",
    61: "light rain",
    63: "moderate rain",
    65: "heavy rain",
    66: "light freezing rain",
    67: "heavy freezing rain",
    71: "light snow",
    73: "moderate snow",
    75: "heavy snow",
    77: "snow grains",
    80: "light rain showers",
    81: "moderate rain showers",
    82: "violent rain showers",
    85: "light snow showers",
    86: "heavy snow showers",
    95: "thunderstorm",
    96: "thunderstorm with light hail",
    99: "thunderstorm with heavy hail",
}


@dataclass(frozen=True, slots=True)
class Place:
    name: str
    country: str
    latitude: float
    longitude: float
    timezone: str

    @property
    def label(self) -> str:
        return f"{self.name}, {self.country}" if self.country else self.name


def describe_code(code: Any) -> str:
    """Words for a WMO weather code; an unknown code is named rather than guessed."""
    if isinstance(code, bool) or not isinstance(code, int | float):
        return "unknown conditions"
    number = int(code)
    return WMO_WORDS.get(number, f"weather code {number}")


def _status_error(status: int, retry_after: str | None) -> ToolError:
    """An error status in this code's words only: the service's own ``reason`` would
    reach the model's Error result unframed, a way to put sentences in its mouth. A rate
    limit (a 429, or a 503 that says when to come back) says to wait and try again."""
    said = status_text(status)
    if status == 429 or (status == 503 and retry_after):
        return ToolError(
            f"the weather service is rate-limiting requests ({said}); {wait_advice(retry_after)}"
        )
    if 400 <= status < 500:
        return ToolError(f"the weather service refused the request ({said})")
    return ToolError(f"the weather service failed (HTTP {status}); try again later")


async def _get_json(
    http: aiohttp.ClientSession, url: str, params: Mapping[str, str], timeout_s: float
) -> Any:
    """GET and decode JSON, turning every transport failure into a ToolError."""
    try:
        async with http.get(
            url, params=params, timeout=aiohttp.ClientTimeout(total=timeout_s)
        ) as resp:
            raw = await resp.read()
            status = resp.status
            retry_after = resp.headers.get("Retry-After")
    except TimeoutError:
        log.warning("weather service %s timed out after %ss", url, timeout_s)
        raise ToolError(
            f"the weather service did not answer within {timeout_s:g} s; try again later"
        ) from None
    except aiohttp.ClientError as exc:
        log.warning("weather service %s unreachable: %s", url, exc)
        raise ToolError(
            "cannot reach the weather service (connection failed); try again later"
        ) from None
    if status != 200:
        log.warning("weather service %s answered HTTP %s", url, status)
        raise _status_error(status, retry_after)
    try:
        return json.loads(raw)
    except ValueError:
        log.warning("weather service %s sent malformed JSON", url)
        raise ToolError("the weather service sent a malformed answer; try again later") from None


def _malformed(what: str) -> ToolError:
    log.warning("weather service answer malformed: %s", what)
    return ToolError(f"the weather service sent a malformed answer ({what}); try again later")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _pick(results: list[Any], qualifier: str) -> Any:
    """Prefer the result whose country or region matches the text after the comma."""
    wanted = qualifier.strip().lower()
    if wanted:
        for result in results:
            if not isinstance(result, dict):
                continue
            fields = ("country", "country_code", "admin1", "admin2", "admin3", "admin4")
            if any(str(result.get(f, "")).lower() == wanted for f in fields):
                return result
    return results[0]


async def geocode(http: aiohttp.ClientSession, settings: WeatherSettings, city: str) -> Place:
    """Resolve a city name. Open-Meteo searches names only, so "Paris, France" is split."""
    name, _, qualifier = city.partition(",")
    params = {
        "name": name.strip(),
        "count": "10" if qualifier.strip() else "1",
        "language": "en",
        "format": "json",
    }
    data = await _get_json(http, settings.geocoding_url, params, settings.timeout_s)
    if not isinstance(data, dict):
        raise _malformed("geocoding answer is not an object")
    results = data.get("results")
    if not results:
        raise ToolError(f"no place called {city!r} was found; check the spelling")
    if not isinstance(results, list):
        raise _malformed("geocoding results are not a list")
    found = _pick(results, qualifier)
    if not isinstance(found, dict):
        raise _malformed("geocoding result is not an object")
    lat, lon = _number(found.get("latitude")), _number(found.get("longitude"))
    place_name = found.get("name")
    if lat is None or lon is None or not isinstance(place_name, str):
        raise _malformed("geocoding result lacks name or coordinates")
    country = found.get("country")
    zone = found.get("timezone")
    return Place(
        name=place_name,
        country=country if isinstance(country, str) else "",
        latitude=lat,
        longitude=lon,
        timezone=zone if isinstance(zone, str) and zone else "auto",
    )


def _fmt(value: float) -> str:
    return f"{round(value, 1):g}"


def summarize(place: Place, day: date, data: Any) -> str:
    """One line from a daily forecast answer: conditions, temperatures, precipitation."""
    if not isinstance(data, dict) or not isinstance(data.get("daily"), dict):
        raise _malformed("no daily forecast")
    daily: dict[str, Any] = data["daily"]
    units = data.get("daily_units")
    units = units if isinstance(units, dict) else {}
    times = daily.get("time")
    if not isinstance(times, list) or day.isoformat() not in times:
        raise _malformed(f"no forecast for {day.isoformat()}")
    index = times.index(day.isoformat())

    def value(key: str) -> Any:
        column = daily.get(key)
        return column[index] if isinstance(column, list) and index < len(column) else None

    parts = [describe_code(value("weather_code"))]
    low, high = _number(value("temperature_2m_min")), _number(value("temperature_2m_max"))
    unit = str(units.get("temperature_2m_max") or units.get("temperature_2m_min") or "°C")
    if low is not None and high is not None:
        parts.append(f"{_fmt(low)} to {_fmt(high)} {unit}")
    elif high is not None:
        parts.append(f"up to {_fmt(high)} {unit}")
    elif low is not None:
        parts.append(f"from {_fmt(low)} {unit}")
    chance = _number(value("precipitation_probability_max"))
    if chance is not None:
        chance_unit = str(units.get("precipitation_probability_max") or "%")
        parts.append(f"precipitation chance {round(chance)}{chance_unit}")
    return f"{place.label} on {day.isoformat()}: {', '.join(parts)}"


async def forecast_line(
    http: aiohttp.ClientSession, settings: WeatherSettings, city: str, day: date
) -> str:
    """Geocode ``city`` and summarize its forecast for ``day`` (already range-checked)."""
    place = await geocode(http, settings, city)
    params = {
        "latitude": str(place.latitude),
        "longitude": str(place.longitude),
        "daily": ",".join(DAILY_VARIABLES),
        "timezone": place.timezone,
        "start_date": day.isoformat(),
        "end_date": day.isoformat(),
    }
    data = await _get_json(http, settings.forecast_url, params, settings.timeout_s)
    return summarize(place, day, data)
