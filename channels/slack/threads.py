"""Which threads the bot has joined, and what was said in one before it was asked.

A thread is joined when the bot is addressed in it (or a top-level mention opens it);
later replies there are answered without a new mention. The first time the bot is
mentioned inside a thread it had not joined, the thread so far is read
(conversations.replies: its first message and the latest ones, capped) and handed to
the model as context. Joined threads are kept in the channel's StateStore (so a
restart does not re-read them) with a small in-memory cache in front.
"""

from __future__ import annotations

import logging
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from channels.base import StateStore
from channels.remembered import Remembered

log = logging.getLogger(__name__)

CONTEXT_MAX = 20  # earlier messages handed to the model


class Threads:
    def __init__(self, client: AsyncWebClient, state: StateStore | None = None) -> None:
        self._client = client
        self._joined = Remembered(state, "slack:thread")

    async def joined(self, channel: str, thread_ts: str) -> bool:
        return await self._joined.has(f"{channel}:{thread_ts}")

    async def join(self, channel: str, thread_ts: str) -> None:
        await self._joined.add(f"{channel}:{thread_ts}")

    async def history(self, channel: str, thread_ts: str, before: str) -> list[dict[str, Any]]:
        """The thread's first message and the latest ones before ``before``, oldest first;
        [] when Slack cannot be asked (the turn goes on without context)."""
        try:
            resp = await self._client.conversations_replies(
                channel=channel, ts=thread_ts, latest=before, inclusive=False, limit=200
            )
        except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
            log.warning("slack thread %s/%s not readable (%s); no context", channel, thread_ts, exc)
            return []
        messages = [m for m in resp.get("messages") or () if isinstance(m, dict)]
        earlier = [m for m in messages if _ts(m) < _ts({"ts": before})]
        if len(earlier) <= CONTEXT_MAX:
            return earlier
        return [earlier[0], *earlier[-(CONTEXT_MAX - 1) :]]


def _ts(message: dict[str, Any]) -> float:
    try:
        return float(message.get("ts") or 0)
    except ValueError:
        return 0.0
