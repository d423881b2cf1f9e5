"""One ``web_fetch`` download: guarded hops, capped size and time, no surprises.

Redirects are followed here, not by aiohttp, so each hop's URL passes the SSRF guard
(:mod:`tools.web.ssrf`) before its connection and at most ``max_redirects`` are taken.
Each fetch has its own session whose connector resolves only through the
:class:`~tools.web.ssrf.PinnedResolver` (the addresses just checked), keeps the Host
header and TLS SNI the URL's name, and ignores proxy variables. The whole fetch (every
hop and the body) must finish within ``timeout_s``, so a server that drips a byte at a
time is stopped; the body is read in chunks up to ``max_bytes`` (after decompression),
so an endless one is cut. What an error says of the server's answer is only what
:mod:`tools.web.reasons` allows (a status's standard phrase, never its own).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import ClassVar

import aiohttp
from yarl import URL

from bot.config.webtools import FetchSettings
from bot.documents import kind_of
from tools.web.errors import HttpStatusError, RateLimited, TooLarge, WebError, WebTimeout
from tools.web.reasons import failure, media_type, shown_url, status_text, wait_advice
from tools.web.ssrf import AddressGuard, Allowance, PinnedResolver, Refused

log = logging.getLogger(__name__)

REDIRECTS = frozenset({301, 302, 303, 307, 308})
ACCEPT = "text/html,application/xhtml+xml,application/pdf,application/json,text/*;q=0.9,*/*;q=0.5"
_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class Fetched:
    """A downloaded body; ``truncated`` when it went on past ``max_bytes``."""

    url: str
    content_type: str
    charset: str | None
    body: bytes
    truncated: bool


class Fetcher:
    """Downloads URLs under ``[fetch]``. ``connector_class`` is the seam tests wrap so
    that a connection to anything but loopback fails the test."""

    connector_class: ClassVar[type[aiohttp.TCPConnector]] = aiohttp.TCPConnector

    def __init__(self, settings: FetchSettings, *, guard: AddressGuard | None = None) -> None:
        self._settings = settings
        self._guard = guard or AddressGuard(Allowance.parse(settings.allow_private))

    async def fetch(self, url: str) -> Fetched:
        timeout_s = self._settings.timeout_s
        try:
            async with asyncio.timeout(timeout_s):
                return await self._fetch(url)
        except TimeoutError:
            raise WebTimeout(
                f"fetching {url[:200]} did not finish within {timeout_s:g} s "
                "([fetch] timeout_s); the server is too slow or the page too large"
            ) from None

    async def _fetch(self, url: str) -> Fetched:
        try:
            current = URL(url.strip())
        except ValueError as exc:
            raise Refused(f"not a valid URL: {exc}") from None
        if not current.scheme:
            raise Refused(f"not an absolute URL: {url[:200]!r} (e.g. https://example.com/)")
        resolver = PinnedResolver()
        connector = self.connector_class(resolver=resolver, use_dns_cache=False, force_close=True)
        headers = {"User-Agent": self._settings.user_agent, "Accept": ACCEPT}
        async with aiohttp.ClientSession(
            connector=connector, headers=headers, trust_env=False
        ) as session:
            for _ in range(self._settings.max_redirects + 1):
                target = await self._guard.check(current)
                resolver.pin(target)
                try:
                    async with session.get(target.url, allow_redirects=False) as resp:
                        location = resp.headers.get("Location")
                        if resp.status in REDIRECTS and location:
                            current = _follow(current, location)
                            continue
                        return await self._read(current, resp)
                except aiohttp.ClientError as exc:
                    log.info("web_fetch %s failed: %s", current, exc)
                    raise WebError(f"cannot fetch {shown_url(current)}: {failure(exc)}") from None
        raise WebError(
            f"too many redirects (more than {self._settings.max_redirects}) from {url[:200]}"
        )

    async def _read(self, url: URL, resp: aiohttp.ClientResponse) -> Fetched:
        if resp.status >= 400:
            raise status_error(url, resp.status, resp.headers.get("Retry-After"))
        limit = self._settings.max_bytes
        content_type = media_type(resp.headers.get("Content-Type", ""))
        declared = resp.content_length
        if declared is not None and declared > limit and kind_of(b"", content_type) == "pdf":
            raise too_large(str(url), limit)
        chunks: list[bytes] = []
        size = 0
        truncated = False
        async for chunk in resp.content.iter_chunked(_CHUNK):
            room = limit - size
            if len(chunk) >= room:
                chunks.append(chunk[:room])
                truncated = len(chunk) > room or not resp.content.at_eof()
                break
            chunks.append(chunk)
            size += len(chunk)
        return Fetched(str(url), content_type, resp.charset, b"".join(chunks), truncated)


def status_error(url: URL, status: int, retry_after: str | None) -> WebError:
    """An error status as the model reads it: a 429, or a 503 that says when to come
    back, is a rate limit with the wait the server asked for."""
    said = f"{shown_url(url)} answered {status_text(status)}"
    if status == 429 or (status == 503 and retry_after):
        return RateLimited(f"{said}: it is rate-limiting requests; {wait_advice(retry_after)}")
    return HttpStatusError(said)


def _follow(current: URL, location: str) -> URL:
    try:
        return current.join(URL(location))
    except ValueError:
        raise WebError(f"{shown_url(current)} redirects to an invalid URL") from None


def too_large(url: str, limit: int) -> TooLarge:
    return TooLarge(
        f"the document at {shown_url(url)} is larger than [fetch] max_bytes ({limit} bytes)"
    )
