"""OutboundMessage -> chat.postMessage, each chunk exactly once.

Every chunk carries its delivery key in the message ``metadata`` (event type
``bot_delivery``, payload ``{"key": "<delivery key>#<chunk>"}``). When a post's answer
is lost (the connection broke after the request went out), Slack may or may not have
accepted it; the chunk is then looked up in the thread (conversations.replies) or the
channel (conversations.history) before it is posted again, so the user sees it once.
Which chunks are in doubt, and which parts of a long answer are out, is kept in the
channel's StateStore: an outbox retry in the next process looks up and resumes too.
A process that died mid-post left no such record; delivery tells the sender which
messages the dead run was sending (:meth:`SlackSender.in_doubt`), and each of their
chunks is looked up the same way before it is posted.
Rate limits are waited out when the wait is short, else raised as SlackRateLimited for
the outbox to retry later. Errors are sorted for Delivery: a permanent refusal raises
DeliveryRejected, anything else ChannelError.

An answer that was streamed (``OutboundMessage.preview_id``) takes its preview's place:
its first chunk is edited into that message (``chat.stopStream`` for a live stream,
``chat.update`` otherwise) with the same delivery-key metadata a post carries, so the
lookup still finds it; an edit repeated after a crash changes nothing. A preview that
can no longer be edited is deleted and the chunk posted as new.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import ChannelError
from bot.messages import ChatKey, OutboundMessage
from channels.base import IN_FLIGHT_KEEP, Sent, StateStore
from channels.format import PartsProgress
from channels.slack.errors import SlackRateLimited, api_error, error_of, retry_after_s
from channels.slack.mentions import plain_mentions
from channels.slack.mrkdwn import MAX_CHARS, render_chunks, to_mrkdwn
from channels.slack.preview import GONE, SlackPreviews
from channels.slack.unfurl import unfurls

log = logging.getLogger(__name__)

__all__ = ["SlackRateLimited", "SlackSender", "api_error", "retry_after_s"]

DELIVERY_EVENT = "bot_delivery"
LOOKBACK_S = 600.0  # how far back a lost post is searched for
LOOKUP_LIMIT = 100


class LostPost(ChannelError):
    """A post may have been accepted but its answer was lost and it is not found yet."""


class SlackSender:
    def __init__(
        self,
        client: AsyncWebClient,
        *,
        max_wait_s: float = 30.0,
        max_waits: int = 3,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        state: StateStore | None = None,
        previews: SlackPreviews | None = None,
        link_previews: bool = False,
    ) -> None:
        self._client = client
        self._unfurls = unfurls(link_previews)
        self.previews = previews or SlackPreviews(client, lambda: "")
        self._max_wait = max_wait_s
        self._max_waits = max_waits
        self._sleep = sleep
        self._parts = PartsProgress(state=state, prefix="slack")
        self._uncertain = InDoubt(state)

    async def load(self) -> None:
        """What the last run left in doubt (at start)."""
        await self._uncertain.load()

    async def in_doubt(self, msg: OutboundMessage, since: datetime) -> None:
        """A dead run was posting ``msg``: each chunk is looked up before it is posted."""
        self._uncertain.whole(msg.delivery_key, since.timestamp())

    async def send(self, msg: OutboundMessage) -> Sent:
        text = msg.text  # files: uploaded by delivery (channels/slack/files.py)
        chunks = render_chunks(text)
        if not chunks:
            log.info("empty reply to %s not sent", msg.key)
            if msg.preview_id:
                await self._drop_preview(msg.key, msg.preview_id)
            return Sent()

        def post_part(i: int) -> Awaitable[str]:
            part = f"{msg.delivery_key}#{i}"
            if i == 0 and msg.preview_id:
                return self._replace(msg, msg.preview_id, chunks[0], text, len(chunks) == 1)
            return self._deliver(msg.key, chunks[i], part)

        sent = await self._parts.post(msg.delivery_key, len(chunks), post_part)
        self._uncertain.settle_whole(msg.delivery_key)
        return sent

    async def _replace(
        self, msg: OutboundMessage, ts: str, chunk: str, text: str, whole: bool
    ) -> str:
        """The answer's first chunk in place of its preview ``ts`` (repeating it is harmless);
        ``whole``: that chunk is all of ``text``."""
        part = f"{msg.delivery_key}#0"
        metadata = {"event_type": DELIVERY_EVENT, "event_payload": {"key": part}}
        key = msg.key
        for attempt in itertools.count(1):
            try:
                if not await self._stop_stream(key, ts, text if whole else None, metadata):
                    self.previews.charge("update")
                    await self._client.chat_update(
                        channel=key.chat_id, ts=ts, text=chunk, blocks=[], metadata=metadata
                    )
                self.previews.forget(ts)
                return ts
            except SlackApiError as exc:
                if error_of(exc) in GONE:
                    log.info("slack preview %s is gone (%s); posting the answer", ts, error_of(exc))
                    await self._drop_preview(key, ts)
                    return await self._deliver(key, chunk, part)
                await self._wait_or_raise(exc, attempt, "the answer")
            except (aiohttp.ClientError, TimeoutError) as exc:  # an edit: the retry repeats it
                raise ChannelError(f"Slack edit of the preview failed: {exc!r}") from exc
        raise AssertionError("unreachable")

    async def _stop_stream(
        self, key: ChatKey, ts: str, text: str | None, metadata: dict[str, Any]
    ) -> bool:
        """End the preview's stream, if it is one; True when that also wrote the answer
        (``text``, the whole answer, only grew what was streamed)."""
        live = self.previews.was_streaming(ts)
        if live is False or (live is None and key.thread_id is None):
            return False  # an edited message (or, unknown here, one outside a thread)
        streamed = self.previews.streamed(ts)
        text = None if text is None else plain_mentions(text)  # what the stream was given
        if live and text is not None and text.startswith(streamed):
            added = text[len(streamed) :] or None
            return await self.previews.stop(key, ts, markdown_text=added, metadata=metadata)
        await self.previews.stop(key, ts, metadata=metadata)
        return False

    async def _drop_preview(self, key: ChatKey, ts: str) -> None:
        try:
            await self.previews.delete(key, ts)
        except ChannelError as exc:  # best effort: the answer goes out regardless
            log.warning("slack: could not delete the preview %s in %s: %s", ts, key, exc)

    async def _deliver(self, key: ChatKey, text: str, part: str) -> str:
        """Post one chunk once: a chunk whose earlier post was lost is looked up first."""
        since = await self._uncertain.since(part)
        if since is not None:  # an earlier attempt (maybe before a restart) lost its answer
            found = await self.find(key, part, since)
            await self._uncertain.settle(part)
            if found is not None:
                return found
            log.info("Slack post %s had not arrived; posting it now", part)
        started = time.time()
        try:
            return await self._post(key, text, part)
        except (aiohttp.ClientConnectorError, aiohttp.InvalidURL) as exc:
            raise ChannelError(f"Slack unreachable: {exc}") from exc  # never went out
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.warning("Slack post %s: answer lost (%s); looking it up", part, exc)
            await self._uncertain.doubt(part, started)
        found = await self.find(key, part, started)
        if found is None:
            raise LostPost(f"Slack post {part} lost and not found; looking again later")
        await self._uncertain.settle(part)
        return found

    async def _post(self, key: ChatKey, text: str, part: str) -> str:
        for attempt in itertools.count(1):
            try:
                resp = await self._client.chat_postMessage(
                    channel=key.chat_id,
                    thread_ts=key.thread_id,
                    text=text,
                    mrkdwn=True,
                    metadata={"event_type": DELIVERY_EVENT, "event_payload": {"key": part}},
                    **self._unfurls,
                )
                return str(resp["ts"])
            except SlackApiError as exc:
                await self._wait_or_raise(exc, attempt, "the message")
        raise AssertionError("unreachable")

    async def _wait_or_raise(self, exc: SlackApiError, attempt: int, what: str) -> None:
        """Sleep out a short 429 (nothing was posted: safe to repeat); raise the rest."""
        wait = retry_after_s(exc)
        if wait is None:
            raise api_error(exc, what) from exc
        if attempt > self._max_waits or wait > self._max_wait:
            raise SlackRateLimited(wait) from exc
        log.warning("Slack rate limit: waiting %.1f s (attempt %d)", wait, attempt)
        await self._sleep(wait)

    async def find(self, key: ChatKey, part: str, since: float) -> str | None:
        """The ts of our message carrying ``part`` in its metadata, or None."""
        oldest = f"{since - LOOKBACK_S:.6f}"
        common: dict[str, Any] = {
            "channel": key.chat_id,
            "oldest": oldest,
            "include_all_metadata": True,
            "limit": LOOKUP_LIMIT,
        }
        try:
            if key.thread_id:
                resp = await self._client.conversations_replies(ts=key.thread_id, **common)
            else:
                resp = await self._client.conversations_history(**common)
        except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
            # Never DeliveryRejected: the post may have landed; the outbox asks again.
            raise ChannelError(f"Slack lookup of a lost post failed: {exc}") from exc
        for message in resp.get("messages") or ():
            if _carries(message, part):
                log.info("Slack post %s had arrived (ts %s); not posted again", part, message["ts"])
                return str(message["ts"])
        return None

    async def edit(self, key: ChatKey, ts: str, text: str) -> None:
        rendered = to_mrkdwn(text)
        if len(rendered) > MAX_CHARS:
            rendered = rendered[: MAX_CHARS - 1] + "…"
        for attempt in itertools.count(1):
            try:
                await self._client.chat_update(channel=key.chat_id, ts=ts, text=rendered)
                return
            except SlackApiError as exc:
                await self._wait_or_raise(exc, attempt, "the edit")
            except (aiohttp.ClientError, TimeoutError) as exc:
                raise ChannelError(f"Slack edit failed: {exc}") from exc

    async def reaction(self, add: bool, channel: str, ts: str, name: str) -> None:
        """Add or remove a reaction; already there / already gone count as done."""
        try:
            if add:
                await self._client.reactions_add(channel=channel, timestamp=ts, name=name)
            else:
                await self._client.reactions_remove(channel=channel, timestamp=ts, name=name)
        except SlackApiError as exc:
            error = exc.response.get("error") if exc.response is not None else None
            if error in ("already_reacted", "no_reaction"):
                return
            raise api_error(exc, "the reaction") from exc
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ChannelError(f"Slack reaction failed: {exc}") from exc


class InDoubt:
    """Chunks whose post may have landed -> when it was sent (to search from).

    Kept in the StateStore too (one value, ``slack:lost-posts``: the StateStore has no
    listing), so the lookup still happens when the retry is in a new process. It is
    read once, at start: a post costs no read (one per chunk was 0.1 ms of each
    answer), and a write only when its answer is lost and when that is settled.
    """

    KEY = "slack:lost-posts"

    def __init__(self, state: StateStore | None) -> None:
        self._state = state
        self._since: dict[str, float] = {}
        # Whole deliveries a dead run was posting (from the outbox, so kept in memory
        # only: after another crash the outbox names them again).
        self._deliveries: dict[str, float] = {}

    async def load(self) -> None:
        raw = await self._state.get(self.KEY) if self._state is not None else None
        try:
            found = json.loads(raw) if raw else {}
            self._since = {str(k): float(v) for k, v in found.items()}
        except (ValueError, TypeError, AttributeError):
            log.warning("%s unreadable: lost posts of the last run are not looked up", self.KEY)

    def whole(self, delivery_key: str, since: float) -> None:
        self._deliveries[delivery_key] = since
        while len(self._deliveries) > 1000:
            self._deliveries.pop(next(iter(self._deliveries)))

    def settle_whole(self, delivery_key: str) -> None:
        self._deliveries.pop(delivery_key, None)

    async def since(self, part: str) -> float | None:
        whole = self._deliveries.get(part.rpartition("#")[0])
        if whole is not None and part not in self._since:
            self._since[part] = whole  # settled like a lost answer once looked up
        return self._since.get(part)

    async def doubt(self, part: str, started: float) -> None:
        self._since[part] = started
        while len(self._since) > 1000:
            self._since.pop(next(iter(self._since)))
        await self._save()

    async def settle(self, part: str) -> None:
        if self._since.pop(part, None) is not None:
            await self._save()

    async def _save(self) -> None:
        if self._state is None:
            return
        if not self._since:
            await self._state.delete(self.KEY)
            return
        value = json.dumps({k: round(v, 6) for k, v in self._since.items()})
        await self._state.set(self.KEY, value, keep_for=IN_FLIGHT_KEEP)


def _carries(message: Mapping[str, Any], part: str) -> bool:
    metadata = message.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("event_type") != DELIVERY_EVENT:
        return False
    payload = metadata.get("event_payload")
    return isinstance(payload, dict) and payload.get("key") == part and "ts" in message
