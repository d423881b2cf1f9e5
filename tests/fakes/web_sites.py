"""Fake web sites and search APIs on 127.0.0.1 for ``web_fetch`` and ``web_search``,
and the connector that fails a test on any connection that is not to loopback.

:class:`FakeSite` serves pages by path (``site.page(path, body, content_type)``), plus
redirects, a server that drips one byte at a time and one whose body never ends.
:class:`FakeSearch` answers like DuckDuckGo's HTML page, Brave's, Tavily's and SearXNG's
JSON APIs, with a scripted status when told (``search.fail(429)``).
"""

from __future__ import annotations

import asyncio
import html
import ipaddress
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from aiohttp import web

from tests.fakes.loopback import LoopbackServer
from tools.web.fetch import Fetcher


class LoopbackOnlyConnector(aiohttp.TCPConnector):
    """A connector that fails the test, before any packet is sent, when asked to connect
    to an address outside 127.0.0.0/8 and ::1; it counts the connections it allowed."""

    connects: list[str] = []  # noqa: RUF012  (shared on purpose: one list per test)

    async def _wrap_create_connection(self, *args: Any, **kwargs: Any) -> Any:
        for info in kwargs["addr_infos"]:
            address = ipaddress.ip_address(info[4][0])
            if not address.is_loopback:
                pytest.fail(f"web_fetch tried to connect to {address}, not loopback")
            LoopbackOnlyConnector.connects.append(str(address))
        return await super()._wrap_create_connection(*args, **kwargs)


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """In every test (a plugin of tests/conftest.py), every Fetcher connects through
    :class:`LoopbackOnlyConnector`; the list of the connections made is returned."""
    monkeypatch.setattr(LoopbackOnlyConnector, "connects", [])
    monkeypatch.setattr(Fetcher, "connector_class", LoopbackOnlyConnector)
    return LoopbackOnlyConnector.connects


@dataclass
class Page:
    body: bytes
    content_type: str
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


class FakeSite(LoopbackServer):
    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}
        self.requests: list[web.Request] = []

    def page(
        self,
        path: str,
        body: str | bytes,
        content_type: str = "text/html; charset=utf-8",
        status: int = 200,
        **headers: str,
    ) -> str:
        """Serve ``body`` at ``path``; returns the page's URL."""
        data = body.encode() if isinstance(body, str) else body
        self.pages[path] = Page(data, content_type, status, dict(headers))
        return self.root + path

    def redirect(self, path: str, location: str, status: int = 302) -> str:
        self.pages[path] = Page(b"", "text/plain", status, {"Location": location})
        return self.root + path

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/drip", self._drip)
        app.router.add_get("/endless", self._endless)
        app.router.add_get("/{path:.*}", self._serve)

    async def _serve(self, request: web.Request) -> web.Response:
        self.requests.append(request)
        page = self.pages.get(request.path)
        if page is None:
            return web.Response(status=404, text="not found")
        return web.Response(
            status=page.status,
            body=page.body,
            headers={"Content-Type": page.content_type, **page.headers},
        )

    async def _drip(self, request: web.Request) -> web.StreamResponse:
        """One byte every 50 ms, for a minute: only the total time limit stops it."""
        resp = web.StreamResponse(headers={"Content-Type": "text/html"})
        await resp.prepare(request)
        for _ in range(1200):
            await resp.write(b"<p>")
            await asyncio.sleep(0.05)
        return resp

    async def _endless(self, request: web.Request) -> web.StreamResponse:
        """Text for ever (chunked, no length): only the size cap stops it."""
        resp = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await resp.prepare(request)
        line = b"all work and no play makes a dull page\n" * 256
        try:
            while True:
                await resp.write(line)
        except (ConnectionResetError, RuntimeError):
            pass
        return resp


@dataclass
class Hit:
    title: str
    url: str
    snippet: str


class FakeSearch(LoopbackServer):
    """Search APIs: ``/html/`` (DuckDuckGo), ``/brave``, ``/tavily``, ``/search``
    (SearXNG). ``hits`` are what every one of them answers."""

    def __init__(self) -> None:
        self.hits: list[Hit] = []
        self.requests: list[tuple[str, dict[str, str], dict[str, str], Any]] = []
        self._status: int | None = None
        self._headers: dict[str, str] = {}

    def fail(self, status: int, **headers: str) -> None:
        """Answer every following request with ``status`` (and ``headers``)."""
        self._status = status
        self._headers = headers

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/html/", self._duckduckgo)
        app.router.add_get("/brave", self._brave)
        app.router.add_post("/tavily", self._tavily)
        app.router.add_get("/search", self._searxng)

    async def _record(self, request: web.Request) -> web.Response | None:
        body: Any = None
        if request.method == "POST":
            raw = await request.read()
            body = (
                json.loads(raw)
                if request.content_type == "application/json"
                else (dict(await request.post()))
            )
        self.requests.append((request.path, dict(request.query), dict(request.headers), body))
        if self._status is not None:
            return web.Response(
                status=self._status,
                text="<html>slow down</html>",
                content_type="text/html",
                headers=self._headers,
            )
        return None

    async def _duckduckgo(self, request: web.Request) -> web.Response:
        refused = await self._record(request)
        if refused is not None:
            return refused
        items = "".join(
            f'<div class="result results_links web-result"><div class="links_main result__body">'
            f'<h2 class="result__title"><a class="result__a" href="{html.escape(h.url)}">'
            f"{html.escape(h.title)}</a></h2>"
            f'<a class="result__snippet" href="{html.escape(h.url)}">{html.escape(h.snippet)}</a>'
            "</div></div>"
            for h in self.hits
        )
        return web.Response(text=f"<html><body>{items}</body></html>", content_type="text/html")

    async def _brave(self, request: web.Request) -> web.Response:
        refused = await self._record(request)
        results = [{"title": h.title, "url": h.url, "description": h.snippet} for h in self.hits]
        return refused or web.json_response({"web": {"results": results}})

    async def _tavily(self, request: web.Request) -> web.Response:
        refused = await self._record(request)
        results = [{"title": h.title, "url": h.url, "content": h.snippet} for h in self.hits]
        return refused or web.json_response({"results": results})

    async def _searxng(self, request: web.Request) -> web.Response:
        refused = await self._record(request)
        results = [{"title": h.title, "url": h.url, "content": h.snippet} for h in self.hits]
        return refused or web.json_response({"results": results})


@pytest_asyncio.fixture
async def fake_site() -> AsyncIterator[FakeSite]:
    async with FakeSite() as site:
        yield site


@pytest_asyncio.fixture
async def fake_search() -> AsyncIterator[FakeSearch]:
    async with FakeSearch() as search:
        yield search


# A long article (about 41,000 characters of text): more than one web_fetch result holds.
TIDES = (
    "<html><body><article><h1>Tides</h1>"
    + "".join(
        f"<p>Paragraph {n}: the tide tables for the harbour list high and low water.</p>"
        for n in range(600)
    )
    + "</article></body></html>"
)
