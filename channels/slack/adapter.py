"""The Slack channel: slack-bolt over Socket Mode and/or the HTTP Events API.

Both receiving paths feed one handler: normalize the event, decide whether it is for
the bot, add thread context the first time the bot is asked inside a thread, and
journal it through ``put_inbound`` before Slack gets its ack (see receive.py). Sending,
edits and reactions go through SlackSender (see send.py). While a turn runs, the
message being answered wears an :eyes: reaction, removed once the answer is posted, by
the next process too if a restart cut the turn off (see working.py).
Streamed previews (``SupportsPreview``) are a native Slack stream in threads, else an
edited message, paid from one budget per workspace (see preview.py).

After a start, what was said while the daemon was away is read back
(conversations.history for DMs and channels, conversations.replies for threads, after
the last message seen in each) and handled like a live event, before any live event.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections import OrderedDict
from datetime import datetime
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError

from bot.errors import ChannelError
from bot.messages import ChatKey, InboundMessage, OutboundMessage
from channels.base import (
    CAUGHT_UP,
    CatchUpWindow,
    ChannelHealth,
    PutInbound,
    Route,
    Sent,
    StateStore,
)
from channels.catchup import Cursors, catch_up
from channels.slack import normalize as norm
from channels.slack.client import keep_alive, make_client
from channels.slack.files import MAX_UPLOAD_BYTES, SlackFiles
from channels.slack.mrkdwn import MARKDOWN_BUDGET
from channels.slack.preview import SlackPreviews
from channels.slack.receive import SlackReceiver
from channels.slack.send import SlackSender
from channels.slack.settings import SlackSettings
from channels.slack.threads import Threads
from channels.slack.working import WorkingSignal

log = logging.getLogger(__name__)

RETRY_START_S = (1.0, 60.0)  # backoff while Slack is unreachable at start: base, cap
# A few emoji the daemon may pass as characters; Slack's reactions take names.
EMOJI_NAMES = {
    "👀": "eyes", "👍": "+1", "👎": "-1", "✅": "white_check_mark", "❌": "x",
    "❤️": "heart", "🎉": "tada", "🤔": "thinking_face", "⏳": "hourglass_flowing_sand",
}  # fmt: skip


def emoji_name(emoji: str) -> str:
    return EMOJI_NAMES.get(emoji, emoji.strip(":"))


class SlackChannel:
    name = norm.CHANNEL
    trusted = False
    # Slack's client takes a message starting with "/" for its own slash commands.
    command_hint = (
        "In Slack, a message starting with / is taken by Slack itself: start a command"
        " with a space (' /help') or after @mentioning the bot."
    )

    def __init__(
        self,
        settings: SlackSettings,
        *,
        state: StateStore | None = None,
        shared: bool = False,
        ping_interval: float = 10.0,
        max_wait_s: float = 30.0,
        connect_wait_s: float = 10.0,
    ) -> None:
        self.settings = settings
        self._ping_interval = ping_interval
        self._connect_wait_s = connect_wait_s  # start awaits the Socket Mode connection
        token = settings.bot_token.get_secret_value()
        self.client = make_client(token, settings.api_url)
        previews = SlackPreviews(
            self.client,
            lambda: self.me.team_id if self.me else "",
            link_previews=settings.link_previews,
        )
        self.sender = SlackSender(
            self.client,
            max_wait_s=max_wait_s,
            state=state,
            previews=previews,
            link_previews=settings.link_previews,
        )
        self.files = SlackFiles(self.client, token, settings.api_url)
        self.threads = Threads(self.client, state)
        # Bolt gets its own client without a token: our authorize() supplies it per event.
        self.receiver = SlackReceiver(
            make_client(None, settings.api_url),
            settings.signing_secret.get_secret_value(),
            token,
            self._on_body,
        )
        self.me: norm.BotIdentity | None = None
        self._http: aiohttp.ClientSession | None = None  # the Web API's connections
        self._put_inbound: PutInbound | None = None
        self._task: asyncio.Task[None] | None = None
        self._pending: OrderedDict[str, asyncio.Future[InboundMessage | None]] = OrderedDict()
        # Per chat, the message being answered and who wrote it (typing; a stream's
        # recipient).
        self._latest: OrderedDict[ChatKey, tuple[str, str]] = OrderedDict()
        self._askers: dict[ChatKey, str] = {}
        # :eyes: while a turn runs (``shared``: among replicas, see working.py)
        self.working = WorkingSignal(self.sender, state, shared=shared)
        # Per DM, channel and thread the bot takes part in: the last message seen.
        self._cursors = Cursors(state, "slack:seen")
        self._window: CatchUpWindow | None = None
        self._caught_up = asyncio.Event()  # live events wait while history is read
        self._caught_up.set()
        self._catching_up: asyncio.Task[None] | None = None

    # -- lifecycle ---------------------------------------------------------------------
    @property
    def connected(self) -> bool:
        return self.health().ok

    def health(self) -> ChannelHealth:
        """Identified, and its Socket Mode connection (when configured) open. The HTTP
        Events API alone cannot tell a quiet workspace from an unreachable address."""
        if self.me is None:
            return ChannelHealth(False, "not identified yet (auth.test not answered; retrying)")
        if self.settings.app_token.get_secret_value() and not self.receiver.socket_up:
            return ChannelHealth(False, "Socket Mode connection down (reconnecting)")
        return ChannelHealth(True) if self.receiver.accepting else ChannelHealth(False, "stopped")

    def routes(self) -> list[Route]:
        """HTTP Events API: ``POST http_path`` on the daemon's shared web app."""
        if not self.settings.signing_secret.get_secret_value():
            return []
        return [Route("POST", self.settings.http_path, self.receiver.handle_http)]

    def catch_up_within(self, window: CatchUpWindow) -> None:
        self._window = window

    async def start(self, put_inbound: PutInbound) -> None:
        self._put_inbound = put_inbound
        await self._cursors.load()
        await self.sender.load()
        if self._http is None:
            self._http = keep_alive(self.client, self.receiver.app.client)
        if not (self.settings.app_token.get_secret_value() or self.routes()):
            raise ChannelError("slack needs app_token (Socket Mode) or signing_secret (HTTP)")
        try:
            await self._identify()
        except SlackApiError as exc:
            raise ChannelError(f"slack bot token refused: {exc.response.get('error')}") from exc
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.warning("slack unreachable at start (%s); retrying in the background", exc)
            self._task = asyncio.create_task(self._start_later(), name="slack-start")
            return
        await self._open()

    async def _identify(self) -> None:
        resp = await self.client.auth_test()
        self.me = norm.BotIdentity(
            str(resp.get("user_id") or ""), str(resp.get("bot_id") or ""), str(resp["team_id"])
        )
        self.receiver.identity = self.me
        log.info("slack: connected as %s (%s) in %s", resp.get("user"), self.me.user_id,
                 resp.get("team"))  # fmt: skip

    async def _open(self) -> None:
        if self._window is not None:
            self._caught_up.clear()  # before the first event can arrive
            self._catching_up = asyncio.create_task(self._catch_up(self._window))
        self.receiver.accepting = True
        app_token = self.settings.app_token.get_secret_value()
        if not app_token:
            return
        try:
            await self.receiver.start_socket(app_token, self._ping_interval, self._connect_wait_s)
        except SlackApiError as exc:
            self.receiver.accepting = False
            raise ChannelError(f"slack app token refused: {exc.response.get('error')}") from exc
        except Exception as exc:  # the SDK's own, unwrapped (a header aiohttp will not send)
            await self.receiver.stop()
            raise ChannelError(
                f"slack socket mode could not start: {type(exc).__name__}: {exc}"
            ) from exc

    async def _start_later(self) -> None:
        base, cap = RETRY_START_S
        failures = 0
        while self.me is None:
            failures += 1
            await asyncio.sleep(min(cap, base * 2.0 ** (failures - 1)))
            try:
                await self._identify()
            except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
                log.warning("slack still unreachable (%s)", exc)
        try:
            await self._open()
        except ChannelError:
            log.exception("slack could not start")

    async def stop(self) -> None:
        for task in (self._task, self._catching_up):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._task = self._catching_up = None
        await self.receiver.stop()
        await self._cursors.close()
        if self._http is not None:
            await self._http.close()
            self._http = None

    # -- catching up -------------------------------------------------------------------
    async def _catch_up(self, window: CatchUpWindow) -> None:
        try:
            await catch_up(self._cursors, window, self._read_after, "slack")
        finally:
            self._caught_up.set()

    async def _read_after(self, conversation: str, last: str, floor: float) -> None:
        """The latest messages after ``last`` (and ``floor``) of a DM, channel or thread
        (``C:thread_ts``), handled in order as live events would be."""
        assert self._window is not None and self.me is not None
        channel, _, thread = conversation.partition(":")
        oldest = last if float(last) >= floor else f"{floor:.6f}"
        if thread:
            resp = await self.client.conversations_replies(
                channel=channel, ts=thread, oldest=oldest, inclusive=False, limit=200
            )
            found = list(resp.get("messages") or ())  # oldest first, the root included
        else:
            resp = await self.client.conversations_history(
                channel=channel, oldest=oldest, inclusive=False, limit=self._window.max_messages
            )
            found = list(reversed(resp.get("messages") or ()))  # newest first
        said = [m for m in found if isinstance(m, dict) and float(m.get("ts") or 0) > float(oldest)]
        for m in said[-self._window.max_messages :]:
            body = {
                "team_id": self.me.team_id,
                "event": {**m, "type": "message", "channel": channel},
            }
            await self._on_body(body, caught_up=True)
            self._cursors.saw(conversation, str(m["ts"]), float(m["ts"]))

    # -- receiving ---------------------------------------------------------------------
    async def _on_body(self, body: dict[str, Any], *, caught_up: bool = False) -> None:
        """Journal the message in one event (if it is for us); raising makes Slack resend."""
        assert self.me is not None and self._put_inbound is not None
        c = norm.candidate(body, self.me)
        if c is None:
            event = body.get("event") or {}
            log.debug("slack %s/%s needs no answer", event.get("type"), event.get("subtype"))
            return
        if not caught_up:
            await self._caught_up.wait()  # what was said before it goes first
        msg = await self._inbound_once(c)
        if msg is None:
            return
        if caught_up:
            msg = dataclasses.replace(msg, extras={**msg.extras, CAUGHT_UP: True})
        self._latest[msg.key] = (c.channel, c.ts)
        self._latest.move_to_end(msg.key)
        self._askers[msg.key] = c.user
        while len(self._latest) > 1024:
            self._askers.pop(self._latest.popitem(last=False)[0], None)
        await self._put_inbound(msg)
        self._seen(c)

    def _seen(self, c: norm.Candidate) -> None:
        """The conversations this message keeps the bot in: the thread it was said in,
        else its DM or channel, and the thread a top-level mention opens under itself."""
        at = float(c.ts)
        if c.thread_ts is None:
            self._cursors.saw(c.channel, c.ts, at)
        if thread := c.thread_ts or (None if c.direct else c.ts):
            self._cursors.saw(f"{c.channel}:{thread}", c.ts, at)

    async def _inbound_once(self, c: norm.Candidate) -> InboundMessage | None:
        """One result per Slack message, shared by the message/app_mention twins, so
        both carry the same text and the thread is read at most once."""
        pending = self._pending.get(c.message_id)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[InboundMessage | None] = asyncio.get_running_loop().create_future()
        self._pending[c.message_id] = future
        while len(self._pending) > 512:
            self._pending.popitem(last=False)
        try:
            result = await self._build(c)
        except BaseException as exc:
            self._pending.pop(c.message_id, None)
            future.set_exception(exc)
            future.exception()  # retrieved: a lone failure is not logged as unhandled
            raise
        future.set_result(result)
        return result

    async def _build(self, c: norm.Candidate) -> InboundMessage | None:
        assert self.me is not None
        thread = c.thread_ts or (None if c.direct else c.ts)
        joined = c.thread_ts is not None and await self.threads.joined(c.channel, c.thread_ts)
        if not norm.addressed(c, self.settings.group_policy, joined):
            return None
        context: list[str] = []
        if c.thread_ts is not None and not joined:
            replies = await self.threads.history(c.channel, c.thread_ts, c.ts)
            context = norm.context_lines(replies, c, self.me)
        if thread is not None:
            await self.threads.join(c.channel, thread)
        return norm.to_inbound(c, context)

    # -- sending -----------------------------------------------------------------------
    async def send(self, msg: OutboundMessage) -> Sent:
        sent = await self.sender.send(msg)
        if msg.final:
            await self._clear_working(msg)
        return sent

    async def download(self, file_id: str) -> bytes:
        """A file a user shared (``Attachment.file_id`` is Slack's file id)."""
        return await self.files.download(file_id)

    def upload_limit(self) -> int:
        return MAX_UPLOAD_BYTES

    async def upload(self, key: ChatKey, name: str, data: bytes, caption: str = "") -> Sent:
        return await self.files.upload(key, name, data, caption)

    async def in_doubt(self, msg: OutboundMessage, since: datetime) -> None:
        await self.sender.in_doubt(msg, since)

    async def typing(self, key: ChatKey, message_id: str | None = None) -> None:
        """:eyes: on the message being answered (once; the daemon calls this repeatedly).
        Not on anything for a turn no Slack message started (a follow-up)."""
        target = self._latest.get(key) if message_id is None else norm.parse_message_id(message_id)
        if target is not None:
            await self.working.show(target)

    async def done_working(self, key: ChatKey, message_id: str) -> None:
        """MarksWorking (a stopped turn's, without an answer), and at an answer's final
        send: the :eyes: on ``message_id`` come off."""
        target = norm.parse_message_id(message_id)
        if target is not None:
            await self.working.clear(target)

    async def _clear_working(self, msg: OutboundMessage) -> None:
        if msg.reply_to is not None:
            await self.done_working(msg.key, msg.reply_to)

    def _target(self, key: ChatKey, message_id: str) -> tuple[str, str]:
        """An inbound id (``C:ts``) or a sent id (a bare ts in ``key``'s chat)."""
        return norm.parse_message_id(message_id) or (key.chat_id, message_id)

    async def edit(self, key: ChatKey, message_id: str, text: str) -> None:
        channel, ts = self._target(key, message_id)
        await self.sender.edit(ChatKey(key.channel, channel, key.thread_id), ts, text)

    async def react(self, key: ChatKey, message_id: str, emoji: str) -> None:
        await self.sender.reaction(True, *self._target(key, message_id), emoji_name(emoji))

    async def unreact(self, key: ChatKey, message_id: str, emoji: str) -> None:
        await self.sender.reaction(False, *self._target(key, message_id), emoji_name(emoji))

    # -- streamed previews (SupportsPreview) -------------------------------------------
    def preview_limit(self, key: ChatKey) -> int:
        return MARKDOWN_BUDGET  # the Markdown the answer's first message holds

    def preview_interval(self, key: ChatKey, configured: float) -> float:
        return self.sender.previews.interval(key, configured)

    async def post_preview(self, key: ChatKey, text: str, reply_to: str | None) -> str:
        """In the thread of ``key`` (Slack shows replies as the thread itself)."""
        return await self.sender.previews.post(key, text, self._askers.get(key))

    async def edit_preview(self, key: ChatKey, message_id: str, text: str) -> None:
        await self.sender.previews.edit(key, message_id, text)

    async def delete_preview(self, key: ChatKey, message_id: str) -> None:
        await self.sender.previews.delete(key, message_id)
