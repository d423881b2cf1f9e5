"""A SearXNG instance's JSON API (``format=json`` must be enabled in its settings)."""

from __future__ import annotations

from typing import Any

from tools.web.search.base import HttpGetter, SearchHit, hits_from, request_json


class SearxngSearch:
    name = "searxng"

    def __init__(self, http: HttpGetter, root: str, timeout_s: float) -> None:
        self._http = http
        self._url = root.rstrip("/") + "/search"
        self._timeout_s = timeout_s

    async def search(self, query: str, count: int) -> list[SearchHit]:
        data: Any = await request_json(
            self._http,
            "SearXNG",
            "GET",
            self._url,
            self._timeout_s,
            params={"q": query, "format": "json"},
        )
        return hits_from(data.get("results") if isinstance(data, dict) else None, ("content",))[
            :count
        ]
