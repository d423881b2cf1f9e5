"""Streamed previews on Discord: post, then edit, without ever waiting out a rate limit.

discord.py handles rate limits by waiting: a request into an exhausted bucket sleeps
until it resets, and a 429 is slept out and retried (up to ``max_ratelimit_timeout``,
which it will not set below 30 s). That is right for an answer, wrong for a preview:
an edit that waits seconds would show stale text and hold up its chat's turn. So the
three preview calls go over their own small REST path that follows the same headers
discord.py reads (``X-RateLimit-Remaining`` / ``-Reset-After`` per route and channel,
``retry_after`` and ``global`` in a 429, ``Via`` telling Discord's 429s from a
Cloudflare ban) and refuses instead of waiting: a bucket known to be empty raises
:class:`PreviewRateLimited` before any request, a 429 raises it at once. Buckets are
per channel, so one chat's limit never slows another; the answer itself still goes
through discord.py (see send.py), whose waits belong to the outbox.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import aiohttp
from discord.http import Route

from bot.errors import ChannelError, DeliveryRejected, PreviewGone, PreviewRateLimited
from channels.discord.client import NO_PINGS, SUPPRESS_EMBEDS

log = logging.getLogger(__name__)

UNKNOWN_MESSAGE, TOO_OLD_TO_EDIT = 10008, 30046  # Discord's JSON error codes

MIN_INTERVAL_S = 1.0  # at most one edit a second per chat, whatever is configured
TIMEOUT_S = 10.0
# Buckets (one per route and channel) past which those already reset, which refuse
# nothing, are let go: a bot in many channels keeps only the ones still counting.
BUCKETS_KEPT = 1_000


@dataclass(slots=True)
class _Bucket:
    remaining: int = 1
    resets_at: float = 0.0  # monotonic


class PreviewRest:
    def __init__(self, token: str, user_agent: str, *, link_previews: bool = False) -> None:
        self._headers = {"Authorization": f"Bot {token}", "User-Agent": user_agent}
        self._flags = 0 if link_previews else SUPPRESS_EMBEDS
        self._session: aiohttp.ClientSession | None = None
        self._buckets: dict[tuple[str, int], _Bucket] = {}
        self._global_until = 0.0

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def post(self, channel_id: int, text: str, reference: dict[str, Any] | None) -> str:
        body: dict[str, Any] = {
            "content": text,
            "allowed_mentions": NO_PINGS.to_dict(),
            "flags": self._flags,
        }
        if reference is not None:
            body["message_reference"] = reference
        data = await self._request("POST", "/channels/{channel_id}/messages", channel_id, body)
        return str(data["id"])

    async def edit(self, channel_id: int, message_id: str, text: str) -> None:
        body = {"content": text, "allowed_mentions": NO_PINGS.to_dict()}
        path = "/channels/{channel_id}/messages/" + message_id
        await self._request("PATCH", path, channel_id, body)

    async def delete(self, channel_id: int, message_id: str) -> None:
        path = "/channels/{channel_id}/messages/" + message_id
        try:
            await self._request("DELETE", path, channel_id)
        except PreviewGone:
            return  # already gone: what we wanted
        except DeliveryRejected as exc:
            if "404" not in str(exc):
                raise  # no access; Unknown Message (already gone) is what we wanted

    def _check(self, bucket: tuple[str, int]) -> None:
        """Refuse before asking when Discord said this bucket (or every route) is spent."""
        now = time.monotonic()
        if now < self._global_until:
            raise PreviewRateLimited("Discord global rate limit", self._global_until - now)
        found = self._buckets.get(bucket)
        if found is not None and found.remaining <= 0 and now < found.resets_at:
            raise PreviewRateLimited("Discord rate limit (bucket spent)", found.resets_at - now)

    async def _request(
        self, method: str, path: str, channel_id: int, body: dict[str, Any] | None = None
    ) -> Any:
        # A route's bucket is per channel (its major parameter), as discord.py keys them.
        bucket = (f"{method} {path.split('/messages', maxsplit=1)[0]}/messages", channel_id)
        self._check(bucket)
        if self._session is None:
            timeout = aiohttp.ClientTimeout(total=TIMEOUT_S)
            self._session = aiohttp.ClientSession(headers=self._headers, timeout=timeout)
        url = Route.BASE + path.format(channel_id=channel_id)
        try:
            async with self._session.request(method, url, json=body) as resp:
                self._follow(bucket, resp.headers)
                data = await resp.json() if resp.content_type == "application/json" else None
                if resp.status < 300:
                    return data
                self._refused(bucket, resp, data)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ChannelError(f"Discord preview request failed: {exc!r}") from exc
        raise AssertionError("unreachable")

    def _follow(self, bucket: tuple[str, int], headers: Any) -> None:
        remaining = headers.get("X-RateLimit-Remaining")
        after = headers.get("X-RateLimit-Reset-After")
        if remaining is None or after is None:
            return
        try:
            self._keep(bucket, _Bucket(int(remaining), time.monotonic() + float(after)))
        except ValueError:
            log.debug("discord sent unreadable rate-limit headers: %s / %s", remaining, after)

    def _keep(self, bucket: tuple[str, int], found: _Bucket) -> None:
        self._buckets[bucket] = found
        if len(self._buckets) > BUCKETS_KEPT:
            now = time.monotonic()
            self._buckets = {k: b for k, b in self._buckets.items() if b.resets_at > now}

    def _refused(self, bucket: tuple[str, int], resp: aiohttp.ClientResponse, data: Any) -> None:
        if resp.status == 429 and resp.headers.get("Via") and isinstance(data, dict):
            retry_after = float(data.get("retry_after") or 1.0)
            if data.get("global"):
                self._global_until = time.monotonic() + retry_after
            else:
                self._keep(bucket, _Bucket(0, time.monotonic() + retry_after))
            raise PreviewRateLimited(f"Discord rate limit: retry in {retry_after:g} s", retry_after)
        text = data.get("message") if isinstance(data, dict) else ""
        if isinstance(data, dict) and data.get("code") in (UNKNOWN_MESSAGE, TOO_OLD_TO_EDIT):
            raise PreviewGone(f"Discord: HTTP {resp.status} {text}")
        if resp.status in (403, 404):
            raise DeliveryRejected(f"Discord refused the preview: HTTP {resp.status} {text}")
        # A 429 without Via is Cloudflare's, not Discord's (discord.py treats it as a ban).
        raise ChannelError(f"Discord preview failed: HTTP {resp.status} {text}")
