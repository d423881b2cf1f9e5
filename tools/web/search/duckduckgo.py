"""DuckDuckGo through ddgs, the maintained successor of duckduckgo_search: no key.

ddgs parses DuckDuckGo's HTML results page and speaks HTTP through primp, a blocking
client that imitates a browser (DuckDuckGo refuses plain clients), so each search runs
on a thread. Its engine class is used directly rather than the ``DDGS`` front end,
which would fall back to other engines and swallow the reason of a failure: the
subclass here keeps the HTTP status, so a rate limit (DuckDuckGo answers 202, 403 or
429 with a challenge page) becomes :class:`~tools.web.errors.RateLimited`. The engine's
``search_url`` is its own seam for the endpoint (tests point it at a fake).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any

from tools.web.errors import RateLimited, WebError, WebTimeout
from tools.web.search.base import SearchHit, check_status, rate_limited

log = logging.getLogger(__name__)

ENDPOINT = "https://html.duckduckgo.com/html/"
_RATE_LIMIT_STATUSES = frozenset({202, 403, 429})
SERVICE = "DuckDuckGo"


class DuckDuckGoSearch:
    name = "duckduckgo"

    def __init__(self, timeout_s: float, endpoint: str = ENDPOINT) -> None:
        self._timeout_s = timeout_s
        self._endpoint = endpoint

    async def search(self, query: str, count: int) -> list[SearchHit]:
        return await asyncio.to_thread(self._search, query, count)

    def _search(self, query: str, count: int) -> list[SearchHit]:
        from ddgs.exceptions import DDGSException, TimeoutException

        engine = _engine_class()(timeout=max(1, round(self._timeout_s)))
        engine.search_url = self._endpoint
        try:
            found = engine.search(query) or []
        except TimeoutException:
            raise WebTimeout(
                f"{SERVICE} did not answer within {self._timeout_s:g} s; try again later"
            ) from None
        except DDGSException as exc:
            log.warning("%s search failed: %s", SERVICE, exc)
            raise WebError(f"cannot reach {SERVICE} (connection failed); try again later") from None
        return [SearchHit(r.title, r.href, r.body) for r in found if r.href][:count]


@functools.cache
def _engine_class() -> Any:
    """ddgs's DuckDuckGo engine with the HTTP status kept (defined on first use, so the
    daemon imports ddgs only once a search runs)."""
    from ddgs.engines.duckduckgo import Duckduckgo

    class StatusKeeping(Duckduckgo):
        def request(self, *args: Any, **kwargs: Any) -> Any:
            resp = self.http_client.request(*args, **kwargs)
            retry_after = _retry_after(resp)
            if resp.status_code in _RATE_LIMIT_STATUSES:
                limited = rate_limited(SERVICE, resp.status_code, retry_after)
                raise RateLimited(f"{limited}, or configure another [search] backend")
            check_status(SERVICE, resp.status_code, retry_after)
            return resp.text

    return StatusKeeping


def _retry_after(resp: Any) -> str | None:
    """The Retry-After header of ddgs's response (its client's own response inside)."""
    headers = getattr(getattr(resp, "_resp", None), "headers", None)
    try:
        value = headers.get("retry-after") if headers is not None else None
    except (AttributeError, TypeError):
        return None
    return value if isinstance(value, str) else None
