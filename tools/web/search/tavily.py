"""Tavily's search API (a key from tavily.com)."""

from __future__ import annotations

from typing import Any

from tools.web.search.base import KeyedApi, SearchHit, hits_from, request_json


class TavilySearch(KeyedApi):
    name = "tavily"
    ENDPOINT = "https://api.tavily.com/search"

    async def search(self, query: str, count: int) -> list[SearchHit]:
        data: Any = await request_json(
            self._http,
            "Tavily",
            "POST",
            self._endpoint,
            self._timeout_s,
            json={"query": query, "max_results": min(count, 20)},
            headers={"Authorization": f"Bearer {self._key}"},
        )
        return hits_from(data.get("results") if isinstance(data, dict) else None, ("content",))
