"""What every search backend gives: hits (title, URL, snippet) or a ``WebError``.

The HTTP backends (Brave, Tavily, SearXNG) share :func:`request_json`, which turns
every transport failure and refusal into an error the model can explain: a rate limit
(HTTP 429, or 503 with a Retry-After) is :class:`~tools.web.errors.RateLimited` with the
wait the service asked for, a refused key says so.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp

from tools.web.errors import HttpStatusError, RateLimited, WebError, WebTimeout
from tools.web.reasons import wait_advice

log = logging.getLogger(__name__)

HttpGetter = Callable[[], aiohttp.ClientSession | None]


@dataclass(frozen=True, slots=True)
class SearchHit:
    title: str
    url: str
    snippet: str


class SearchBackend(Protocol):
    name: str

    async def search(self, query: str, count: int) -> list[SearchHit]:
        """Up to ``count`` hits; raises WebError with a readable reason."""
        ...


def text_field(item: Mapping[str, Any], *keys: str) -> str:
    """The first of ``keys`` that holds a string, else ""."""
    for key in keys:
        value = item.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def hits_from(items: Any, snippet_keys: tuple[str, ...]) -> list[SearchHit]:
    """Hits from a list of JSON objects with ``title`` and ``url``; junk is skipped."""
    if not isinstance(items, list):
        return []
    hits = []
    for item in items:
        if isinstance(item, Mapping) and text_field(item, "url"):
            hits.append(
                SearchHit(
                    text_field(item, "title"),
                    text_field(item, "url"),
                    text_field(item, *snippet_keys),
                )
            )
    return hits


async def request_json(
    http: HttpGetter,
    service: str,
    method: str,
    url: str,
    timeout_s: float,
    **kwargs: Any,
) -> Any:
    """One request to a search API, its JSON answer decoded. The shared session when the
    daemon runs, else a short-lived one (a test, ``bot doctor``)."""
    session = http()
    if session is None:
        async with aiohttp.ClientSession() as own:
            return await _request(own, service, method, url, timeout_s, **kwargs)
    return await _request(session, service, method, url, timeout_s, **kwargs)


async def _request(
    session: aiohttp.ClientSession,
    service: str,
    method: str,
    url: str,
    timeout_s: float,
    **kwargs: Any,
) -> Any:
    timeout = aiohttp.ClientTimeout(total=timeout_s)
    try:
        async with session.request(method, url, timeout=timeout, **kwargs) as resp:
            raw = await resp.read()
            status = resp.status
            retry_after = resp.headers.get("Retry-After")
    except TimeoutError:
        raise WebTimeout(
            f"{service} did not answer within {timeout_s:g} s; try again later"
        ) from None
    except aiohttp.ClientError as exc:
        log.warning("%s unreachable: %s", service, exc)
        raise WebError(f"cannot reach {service} (connection failed); try again later") from None
    check_status(service, status, retry_after)
    try:
        return json.loads(raw)
    except ValueError:
        raise WebError(f"{service} sent a malformed answer; try again later") from None


def check_status(service: str, status: int, retry_after: str | None = None) -> None:
    """A readable error for every status but 200; ``retry_after``: the Retry-After
    header, said as the wait a rate limit asks for."""
    if status == 200:
        return
    log.warning("%s answered HTTP %s", service, status)
    if status == 429 or (status == 503 and retry_after):
        raise rate_limited(service, status, retry_after)
    if status in (401, 403):
        raise HttpStatusError(
            f"{service} refused the request (HTTP {status}): check the [search] settings "
            "(api_key; for SearXNG, that its JSON format is enabled)"
        )
    raise HttpStatusError(f"{service} failed (HTTP {status}); try again later")


def rate_limited(service: str, status: int, retry_after: str | None) -> RateLimited:
    return RateLimited(
        f"{service} is rate-limiting searches (HTTP {status}); {wait_advice(retry_after)}"
    )


class KeyedApi:
    """A search API called with a key (Brave, Tavily); ``endpoint`` defaults to the
    service's own (tests point it at a fake)."""

    name: str
    ENDPOINT: str

    def __init__(
        self, http: HttpGetter, api_key: str, timeout_s: float, endpoint: str | None = None
    ) -> None:
        self._http = http
        self._key = api_key
        self._timeout_s = timeout_s
        self._endpoint = endpoint or self.ENDPOINT
