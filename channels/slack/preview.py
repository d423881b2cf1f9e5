"""Streamed previews on Slack: a native stream in threads, else a message that is edited.

Where the workspace offers them, a preview in a thread is a Slack stream
(``chat.startStream``, then ``chat.appendStream`` with what was added, Tier 4): the
client renders the growing Markdown itself. A stream can only grow, so when the text
changes otherwise (a tool's status line replaced by the answer, a retried answer) the
stream is stopped and the message edited from then on. DMs (answered at top level,
and a stream is always a thread reply) and workspaces that refuse ``chat.startStream``
get a posted message edited with ``chat.update`` (Tier 3).

Both allowances are per workspace, not per chat (see budget.py): every call is paid
from the workspace's bucket first, and :meth:`SlackPreviews.interval` spreads one
bucket over the previews running at once. Nothing here waits out a rate limit: it
raises :class:`PreviewRateLimited` at once, and the streaming core pauses that chat.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import ChannelError, PreviewGone, PreviewRateLimited, PreviewStopped
from bot.messages import ChatKey
from channels.slack.budget import Budget
from channels.slack.errors import api_error, error_of, retry_after_s
from channels.slack.mentions import plain_preview
from channels.slack.mrkdwn import to_mrkdwn
from channels.slack.unfurl import unfurls

log = logging.getLogger(__name__)

UPDATES_PER_MINUTE = 50.0  # chat.update, Tier 3
APPENDS_PER_MINUTE = 100.0  # chat.appendStream, Tier 4
ACTIVE_S = 30.0  # a preview not touched for this long no longer shares the budget
# chat.startStream refusals that mean "not in this workspace": stop asking there.
NO_STREAMING = frozenset(
    {"unknown_method", "not_allowed_token_type", "missing_scope", "feature_not_enabled",
     "method_not_supported", "no_permission", "not_allowed"}
)  # fmt: skip
# The message cannot be edited any more: the final answer is posted as new instead.
GONE = frozenset({"message_not_found", "cant_update_message", "edit_window_closed"})
NOT_STREAMING = "message_not_in_streaming_state"
STOPPED_BY_USER = "stopped_by_user"  # the person pressed stop on the stream in Slack

Call = Callable[[], Awaitable[Any]]


@dataclass(slots=True)
class _Preview:
    team: str
    streaming: bool  # a live native stream (append-only) rather than a posted message
    streamed: str = ""  # what the stream holds (Markdown), to append only the rest
    used: float = 0.0  # monotonic time of the last call


def limited(exc: SlackApiError) -> float | None:
    """Seconds Slack asked to wait (a 429, or a ``ratelimited`` error), else None."""
    resp = exc.response
    if resp is None:
        return None
    if resp.status_code == 429 or resp.get("error") == "ratelimited":
        return retry_after_s(exc) or 1.0
    return None


class SlackPreviews:
    def __init__(
        self,
        client: AsyncWebClient,
        team: Callable[[], str],
        *,
        updates_per_minute: float = UPDATES_PER_MINUTE,
        appends_per_minute: float = APPENDS_PER_MINUTE,
        link_previews: bool = False,
    ) -> None:
        self._client = client
        self._unfurls = unfurls(link_previews)
        self._team = team
        self._rates = {"update": updates_per_minute, "append": appends_per_minute}
        self._budgets: dict[tuple[str, str], Budget] = {}
        self._previews: OrderedDict[str, _Preview] = OrderedDict()
        self._no_streaming: set[str] = set()  # teams that refused chat.startStream

    # -- the budget ------------------------------------------------------------------
    def _budget(self, team: str, kind: str) -> Budget:
        found = self._budgets.get((team, kind))
        if found is None:
            found = self._budgets[(team, kind)] = Budget(self._rates[kind])
        return found

    def streams(self, key: ChatKey) -> bool:
        """Whether a new preview in ``key``'s chat is a native stream."""
        return key.thread_id is not None and self._team() not in self._no_streaming

    def interval(self, key: ChatKey, configured: float) -> float:
        """``configured``, or longer while several previews share the workspace's budget."""
        team = self._team()
        now = time.monotonic()
        active = sum(
            1 for p in self._previews.values() if p.team == team and now - p.used < ACTIVE_S
        )
        kind = "append" if self.streams(key) else "update"
        return max(configured, max(1, active) * self._budget(team, kind).seconds_per_call)

    def charge(self, kind: str) -> None:
        """An answer's own call (never refused): the previews' budget pays for it too."""
        self._budget(self._team(), kind).charge()

    def _spend(self, team: str, kind: str) -> None:
        wait = self._budget(team, kind).take()
        if wait:
            raise PreviewRateLimited(f"Slack workspace {team}: {kind} budget spent", wait)

    async def _call(self, team: str, kind: str, what: str, call: Call) -> Any:
        """One preview request paid from the workspace's budget; never waits."""
        self._spend(team, kind)
        try:
            return await call()
        except SlackApiError as exc:
            wait = limited(exc)
            if wait is None and error_of(exc) in GONE:
                raise PreviewGone(f"Slack {what}: {error_of(exc)}") from exc
            if error_of(exc) == STOPPED_BY_USER:
                raise PreviewStopped(f"Slack {what}: {STOPPED_BY_USER}") from exc
            if wait is None:
                raise api_error(exc, what) from exc
            self._budget(team, kind).pause(wait)
            raise PreviewRateLimited(f"Slack {what}: rate limited", wait) from exc
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ChannelError(f"Slack {what} failed: {exc!r}") from exc

    def _remember(self, ts: str, preview: _Preview) -> None:
        preview.used = time.monotonic()
        self._previews[ts] = preview
        self._previews.move_to_end(ts)
        while len(self._previews) > 1000:
            self._previews.popitem(last=False)

    # -- the calls -------------------------------------------------------------------
    async def post(self, key: ChatKey, text: str, recipient: str | None) -> str:
        """The first preview: a stream where possible, else a posted message."""
        text = plain_preview(text)  # a stream's Markdown pings like mrkdwn does
        team = self._team()
        if self.streams(key) and (recipient or key.chat_id.startswith("D")):
            ts = await self._start(key, text, team, recipient)
            if ts is not None:
                return ts
        post = partial(
            self._client.chat_postMessage,
            channel=key.chat_id, thread_ts=key.thread_id, text=to_mrkdwn(text), mrkdwn=True,
            **self._unfurls,
        )  # fmt: skip
        resp = await self._call(team, "update", "the preview", post)
        ts = str(resp["ts"])
        self._remember(ts, _Preview(team, streaming=False))
        return ts

    async def _start(self, key: ChatKey, text: str, team: str, recipient: str | None) -> str | None:
        """``chat.startStream``; None when this workspace does not stream (remembered)."""
        start = partial(
            self._client.chat_startStream,
            channel=key.chat_id, thread_ts=str(key.thread_id), markdown_text=text,
            recipient_team_id=team, recipient_user_id=recipient,
        )  # fmt: skip
        try:
            resp = await self._call(team, "append", "the stream", start)
        except PreviewRateLimited:
            raise
        except ChannelError as exc:
            cause = exc.__cause__
            error = error_of(cause) if isinstance(cause, SlackApiError) else ""
            if not error:
                raise  # unreachable or a server error: not a refusal
            if error in NO_STREAMING:
                self._no_streaming.add(team)
                log.info("slack workspace %s does not stream (%s); editing messages", team, error)
            else:
                log.info("slack refused a stream in %s (%s); editing a message", key, error)
            return None
        ts = str(resp["ts"])
        self._remember(ts, _Preview(team, streaming=True, streamed=text))
        return ts

    async def edit(self, key: ChatKey, ts: str, text: str) -> None:
        """The preview now reads ``text``: appended to a stream, else ``chat.update``."""
        text = plain_preview(text)  # an unfinished mention waits for its end
        preview = self._previews.get(ts) or _Preview(self._team(), streaming=False)
        self._remember(ts, preview)
        if preview.streaming and text.startswith(preview.streamed):
            added = text[len(preview.streamed) :]
            if added:
                append = partial(
                    self._client.chat_appendStream, channel=key.chat_id, ts=ts, markdown_text=added
                )
                await self._call(preview.team, "append", "the stream", append)
                preview.streamed = text
            return
        if preview.streaming:  # a stream cannot take text back: end it, edit from now on
            end = partial(self.stop, key, ts)
            await self._call(preview.team, "update", "the stream's end", end)
        update = partial(
            self._client.chat_update, channel=key.chat_id, ts=ts, text=to_mrkdwn(text), blocks=[]
        )
        await self._call(preview.team, "update", "the preview edit", update)

    async def stop(self, key: ChatKey, ts: str, **final: Any) -> bool:
        """End the stream ``ts`` (with ``final`` arguments of ``chat.stopStream``); False
        when it was not streaming (already stopped, by us or by the user, or an edited
        message) or Slack would not stop it: the message is edited instead."""
        stopped = True
        try:
            await self._client.chat_stopStream(channel=key.chat_id, ts=ts, **final)
        except SlackApiError as exc:
            error = error_of(exc)
            if limited(exc) is not None or error in GONE:
                raise  # wait and ask again / post the answer anew: the caller decides
            if error != NOT_STREAMING:
                log.info("slack would not stop the stream %s (%s); editing it", ts, error)
            stopped = False
        if ts in self._previews:
            self._previews[ts].streaming = False
        return stopped

    def was_streaming(self, ts: str) -> bool | None:
        """True for a live stream, False for an edited message, None when not known here
        (the preview was made by a process that died)."""
        found = self._previews.get(ts)
        return None if found is None else found.streaming

    def streamed(self, ts: str) -> str:
        found = self._previews.get(ts)
        return found.streamed if found is not None else ""

    def forget(self, ts: str) -> None:
        self._previews.pop(ts, None)

    async def delete(self, key: ChatKey, ts: str) -> None:
        """Remove a preview; one already gone counts as removed."""
        self._previews.pop(ts, None)
        try:
            await self._client.chat_delete(channel=key.chat_id, ts=ts)
        except SlackApiError as exc:
            if error_of(exc) == "message_not_found":
                return
            wait = limited(exc)
            if wait is not None:
                raise PreviewRateLimited("Slack delete: rate limited", wait) from exc
            raise api_error(exc, "the delete") from exc
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ChannelError(f"Slack delete failed: {exc!r}") from exc
