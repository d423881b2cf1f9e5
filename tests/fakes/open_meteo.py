"""A scriptable fake Open-Meteo: the geocoding search and the daily forecast, on loopback.

The real aiohttp client talks to it over HTTP, so tests cover URL building, query
parameters, status handling and JSON parsing. Requests whose parameters the real API
would refuse are answered 400 (like Open-Meteo) and listed in ``violations``; the
``fake_weather`` fixture fails the test if any remain.

Usage::

    async with FakeOpenMeteo() as fake:
        fake.add_place("Paris", "France", 48.85, 2.35, "Europe/Paris")
        fake.set_forecast("2026-11-30", weather_code=61, low=4.1, high=9.8, precipitation=80)
        fake.fail("forecast", status=500)          # next forecast request only
        fake.fail("geocoding", body="{not json")   # malformed answer
        fake.fail("forecast", delay=1.0)           # trips a client timeout
        settings = fake.settings(timeout_s=0.2)    # a WeatherSettings pointing here
        fake.requests[0].params["name"]
"""

from __future__ import annotations

import asyncio
import re
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pytest_asyncio
from aiohttp import web

from bot.config import WeatherSettings
from tests.fakes.loopback import LoopbackServer

Endpoint = Literal["geocoding", "forecast"]

GEOCODING_PATH = "/v1/search"
FORECAST_PATH = "/v1/forecast"
GEOCODING_PARAMS = frozenset({"name", "count", "language", "format", "countryCode", "apikey"})
FORECAST_PARAMS = frozenset(
    {
        "latitude",
        "longitude",
        "elevation",
        "hourly",
        "daily",
        "current",
        "temperature_unit",
        "wind_speed_unit",
        "precipitation_unit",
        "timeformat",
        "timezone",
        "past_days",
        "forecast_days",
        "start_date",
        "end_date",
        "models",
        "cell_selection",
        "apikey",
    }
)
DAILY_UNITS = {
    "time": "iso8601",
    "weather_code": "wmo code",
    "temperature_2m_max": "°C",
    "temperature_2m_min": "°C",
    "precipitation_probability_max": "%",
    "precipitation_sum": "mm",
    "wind_speed_10m_max": "km/h",
}
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True, slots=True)
class Failure:
    """One scripted bad answer: a status, a raw body (sent verbatim), or a delay first."""

    status: int = 200
    body: str | None = None
    delay: float = 0.0
    headers: Mapping[str, str] | None = None


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    endpoint: Endpoint
    path: str
    params: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Day:
    weather_code: int | None = 3
    low: float | None = 5.0
    high: float | None = 12.0
    precipitation: int | None = 10


@dataclass
class FakePlace:
    name: str
    country: str
    latitude: float
    longitude: float
    timezone: str
    country_code: str = ""
    admin1: str = ""
    id: int = 0

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "latitude": self.latitude,
            "longitude": self.longitude,
            "elevation": 35.0,
            "feature_code": "PPLC",
            "country_code": self.country_code,
            "timezone": self.timezone,
            "country": self.country,
        }
        if self.admin1:
            body["admin1"] = self.admin1
        return body


@dataclass
class FakeOpenMeteo(LoopbackServer):
    """The fake server; use as ``async with FakeOpenMeteo() as fake``."""

    places: dict[str, list[FakePlace]] = field(default_factory=dict)
    days: dict[str, Day] = field(default_factory=dict)
    default_day: Day = field(default_factory=Day)
    units: dict[str, str] = field(default_factory=lambda: dict(DAILY_UNITS))
    requests: list[RecordedRequest] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    _failures: dict[str, deque[Failure]] = field(default_factory=dict)
    # Every answer waits this long, so concurrent requests overlap and can be counted.
    latency: float = 0.0
    in_flight: int = 0
    peak_in_flight: int = 0

    # -- scripting ----------------------------------------------------------------------

    def add_place(
        self,
        name: str,
        country: str,
        latitude: float,
        longitude: float,
        timezone: str,
        *,
        country_code: str = "",
        admin1: str = "",
    ) -> FakePlace:
        """Found by a case-insensitive exact ``name`` search; several may share a name."""
        place = FakePlace(
            name, country, latitude, longitude, timezone, country_code, admin1, 1000 + self.count
        )
        self.places.setdefault(name.lower(), []).append(place)
        return place

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.places.values())

    def set_forecast(
        self,
        day: str,
        *,
        weather_code: int | None = 3,
        low: float | None = 5.0,
        high: float | None = 12.0,
        precipitation: int | None = 10,
    ) -> None:
        self.days[day] = Day(weather_code, low, high, precipitation)

    def fail(
        self,
        endpoint: Endpoint,
        *,
        status: int = 200,
        body: str | None = None,
        delay: float = 0.0,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Spoil the next request to ``endpoint`` (FIFO, one per call)."""
        failure = Failure(status, body, delay, headers)
        self._failures.setdefault(endpoint, deque()).append(failure)

    def calls(self, endpoint: Endpoint) -> list[RecordedRequest]:
        return [r for r in self.requests if r.endpoint == endpoint]

    # -- lifecycle ----------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return self.root

    def settings(self, timeout_s: float = 5.0) -> WeatherSettings:
        return WeatherSettings(
            geocoding_url=self.base_url + GEOCODING_PATH,
            forecast_url=self.base_url + FORECAST_PATH,
            timeout_s=timeout_s,
        )

    def add_routes(self, app: web.Application) -> None:
        app.middlewares.append(self._count_in_flight)
        app.router.add_get(GEOCODING_PATH, self._geocoding)
        app.router.add_get(FORECAST_PATH, self._forecast)

    @web.middleware
    async def _count_in_flight(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if self.latency:
                await asyncio.sleep(self.latency)
            return await handler(request)
        finally:
            self.in_flight -= 1

    # -- handlers -----------------------------------------------------------------------

    async def _scripted(self, endpoint: Endpoint) -> web.Response | None:
        queue = self._failures.get(endpoint)
        failure = queue.popleft() if queue else None
        if failure is None:
            return None
        if failure.delay:
            await asyncio.sleep(failure.delay)
        if failure.body is not None:
            return web.Response(
                text=failure.body,
                status=failure.status,
                content_type="application/json",
                headers=failure.headers,
            )
        if failure.status != 200:
            return web.json_response(
                {"error": True, "reason": f"scripted failure {failure.status}"},
                status=failure.status,
                headers=failure.headers,
            )
        return None  # a delay only: then answer normally

    def _refuse(self, problems: list[str]) -> web.Response:
        self.violations.extend(problems)
        return web.json_response({"error": True, "reason": "; ".join(problems)}, status=400)

    async def _geocoding(self, request: web.Request) -> web.Response:
        params = dict(request.query)
        self.requests.append(RecordedRequest("geocoding", request.path, params))
        scripted = await self._scripted("geocoding")
        if scripted is not None:
            return scripted
        problems = [
            f"geocoding: unknown parameter {k!r}" for k in params if k not in GEOCODING_PARAMS
        ]
        name = params.get("name", "")
        if "name" not in params:
            problems.append("geocoding: missing 'name'")
        count = params.get("count", "10")
        if not count.isdigit() or not 1 <= int(count) <= 100:
            problems.append(f"geocoding: count must be 1..100, got {count!r}")
        if params.get("format", "json") != "json":
            problems.append(f"geocoding: format must be json here, got {params.get('format')!r}")
        if problems:
            return self._refuse(problems)
        body: dict[str, Any] = {"generationtime_ms": 0.4}
        matches = self.places.get(name.strip().lower(), []) if len(name.strip()) >= 2 else []
        if matches:  # the real API omits "results" entirely when nothing matches
            body["results"] = [p.as_json() for p in matches[: int(count)]]
        return web.json_response(body)

    def _check_forecast(self, params: dict[str, str]) -> list[str]:
        problems = [
            f"forecast: unknown parameter {k!r}" for k in params if k not in FORECAST_PARAMS
        ]
        for key, bound in (("latitude", 90.0), ("longitude", 180.0)):
            try:
                if abs(float(params[key])) > bound:
                    problems.append(f"forecast: {key} out of range")
            except (KeyError, ValueError):
                problems.append(f"forecast: {key} missing or not a number")
        for variable in filter(None, params.get("daily", "").split(",")):
            if variable not in self.units:
                problems.append(f"forecast: unknown daily variable {variable!r}")
        zone = params.get("timezone", "GMT")
        if zone not in ("auto", "GMT"):
            try:
                ZoneInfo(zone)
            except (ZoneInfoNotFoundError, ValueError):
                problems.append(f"forecast: invalid timezone {zone!r}")
        start, end = params.get("start_date"), params.get("end_date")
        if (start is None) != (end is None):
            problems.append("forecast: start_date and end_date go together")
        for value in (start, end):
            if value is not None and not _DATE_RE.fullmatch(value):
                problems.append(f"forecast: date {value!r} is not YYYY-MM-DD")
        if not problems and start and end and end < start:
            problems.append("forecast: end_date before start_date")
        return problems

    async def _forecast(self, request: web.Request) -> web.Response:
        params = dict(request.query)
        self.requests.append(RecordedRequest("forecast", request.path, params))
        scripted = await self._scripted("forecast")
        if scripted is not None:
            return scripted
        problems = self._check_forecast(params)
        if problems:
            return self._refuse(problems)
        variables = [v for v in params.get("daily", "").split(",") if v]
        first = date.fromisoformat(params.get("start_date") or date.today().isoformat())
        last = date.fromisoformat(params.get("end_date") or first.isoformat())
        times = [(first + timedelta(days=i)).isoformat() for i in range((last - first).days + 1)]
        daily: dict[str, list[Any]] = {"time": times}
        for variable in variables:
            daily[variable] = [_column(self.days.get(t, self.default_day), variable) for t in times]
        zone = params.get("timezone", "GMT")
        return web.json_response(
            {
                "latitude": float(params["latitude"]),
                "longitude": float(params["longitude"]),
                "generationtime_ms": 0.1,
                "utc_offset_seconds": 0,
                "timezone": zone,
                "timezone_abbreviation": "GMT",
                "elevation": 35.0,
                "daily_units": {"time": "iso8601", **{v: self.units[v] for v in variables}},
                "daily": daily,
            }
        )


def _column(day: Day, variable: str) -> float | int | None:
    """A day's value for one daily variable; variables the fake does not model are null."""
    values = {
        "weather_code": day.weather_code,
        "temperature_2m_max": day.high,
        "temperature_2m_min": day.low,
        "precipitation_probability_max": day.precipitation,
    }
    return values.get(variable)


@pytest_asyncio.fixture
async def fake_weather() -> AsyncIterator[FakeOpenMeteo]:
    """A started FakeOpenMeteo; the test fails if the client sent what the real API refuses."""
    async with FakeOpenMeteo() as fake:
        yield fake
        assert not fake.violations, f"requests the real Open-Meteo would refuse: {fake.violations}"
