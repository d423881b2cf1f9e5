"""Brave Search's web API (a key from api.search.brave.com)."""

from __future__ import annotations

from typing import Any

from tools.web.search.base import KeyedApi, SearchHit, hits_from, request_json


class BraveSearch(KeyedApi):
    name = "brave"
    ENDPOINT = "https://api.search.brave.com/res/v1/web/search"

    async def search(self, query: str, count: int) -> list[SearchHit]:
        data: Any = await request_json(
            self._http,
            "Brave Search",
            "GET",
            self._endpoint,
            self._timeout_s,
            params={"q": query, "count": str(min(count, 20))},
            headers={"X-Subscription-Token": self._key, "Accept": "application/json"},
        )
        web = data.get("web") if isinstance(data, dict) else None
        return hits_from(web.get("results") if isinstance(web, dict) else None, ("description",))
