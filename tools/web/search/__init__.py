"""Search backends, one module each; :func:`make_backend` picks ``[search] backend``."""

from __future__ import annotations

from bot.config.webtools import SearchSettings
from tools.web.search.base import HttpGetter, SearchBackend, SearchHit

__all__ = ["SearchBackend", "SearchHit", "make_backend"]


def make_backend(settings: SearchSettings, http: HttpGetter) -> SearchBackend:
    key = settings.api_key.get_secret_value()
    if settings.backend == "brave":
        from tools.web.search.brave import BraveSearch

        return BraveSearch(http, key, settings.timeout_s)
    if settings.backend == "tavily":
        from tools.web.search.tavily import TavilySearch

        return TavilySearch(http, key, settings.timeout_s)
    if settings.backend == "searxng":
        from tools.web.search.searxng import SearxngSearch

        return SearxngSearch(http, settings.searxng_url, settings.timeout_s)
    from tools.web.search.duckduckgo import DuckDuckGoSearch

    return DuckDuckGoSearch(settings.timeout_s)
