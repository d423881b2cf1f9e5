"""The Slack channel: slack-bolt over Socket Mode and/or the HTTP Events API.

Both receiving paths feed one handler: normalize the event, decide whether it is for
the bot, add thread context the first time the bot is asked inside a thread, and
journal it through ``put_inbound`` before Slack gets its ack (see receive.py). Sending,
edits and reactions go through SlackSender (see send.py). While a turn runs, the
message being answered wears an :eyes: reaction, removed once the answer is posted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from datetime import datetime
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError

from bot.errors import ChannelError, DeliveryRejected
from bot.messages import ChatKey, InboundMessage, OutboundMessage
from channels.base import PutInbound, Route, Sent, StateStore
from channels.slack import normalize as norm
from channels.slack.client import make_client
from channels.slack.receive import SlackReceiver
from channels.slack.send import SlackSender
from channels.slack.settings import SlackSettings
from channels.slack.threads import Threads

log = logging.getLogger(__name__)

WORKING_EMOJI = "eyes"
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

    def __init__(
        self,
        settings: SlackSettings,
        *,
        state: StateStore | None = None,
        ping_interval: float = 10.0,
        max_wait_s: float = 30.0,
        connect_wait_s: float = 10.0,
    ) -> None:
        self.settings = settings
        self._ping_interval = ping_interval
        self._connect_wait_s = connect_wait_s  # start awaits the Socket Mode connection
        token = settings.bot_token.get_secret_value()
        self.client = make_client(token, settings.api_url)
        self.sender = SlackSender(self.client, max_wait_s=max_wait_s, state=state)
        self.threads = Threads(self.client, state)
        # Bolt gets its own client without a token: our authorize() supplies it per event.
        self.receiver = SlackReceiver(
            make_client(None, settings.api_url),
            settings.signing_secret.get_secret_value(),
            token,
            self._on_body,
        )
        self.me: norm.BotIdentity | None = None
        self._put_inbound: PutInbound | None = None
        self._task: asyncio.Task[None] | None = None
        self._pending: OrderedDict[str, asyncio.Future[InboundMessage | None]] = OrderedDict()
        self._latest: OrderedDict[ChatKey, tuple[str, str]] = OrderedDict()  # for typing
        self._eyes: set[tuple[str, str]] = set()  # messages wearing our :eyes:

    # -- lifecycle ---------------------------------------------------------------------
    @property
    def connected(self) -> bool:
        if self.me is None:
            return False
        if self.settings.app_token.get_secret_value() and not self.receiver.socket_up:
            return False
        return bool(self.receiver.accepting)

    def routes(self) -> list[Route]:
        """HTTP Events API: ``POST http_path`` on the daemon's shared web app."""
        if not self.settings.signing_secret.get_secret_value():
            return []
        return [Route("POST", self.settings.http_path, self.receiver.handle_http)]

    async def start(self, put_inbound: PutInbound) -> None:
        self._put_inbound = put_inbound
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
        self.receiver.accepting = True
        app_token = self.settings.app_token.get_secret_value()
        if not app_token:
            return
        try:
            await self.receiver.start_socket(app_token, self._ping_interval, self._connect_wait_s)
        except SlackApiError as exc:
            self.receiver.accepting = False
            raise ChannelError(f"slack app token refused: {exc.response.get('error')}") from exc

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
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.receiver.stop()

    # -- receiving ---------------------------------------------------------------------
    async def _on_body(self, body: dict[str, Any]) -> None:
        """Journal the message in one event (if it is for us); raising makes Slack resend."""
        assert self.me is not None and self._put_inbound is not None
        c = norm.candidate(body, self.me)
        if c is None:
            event = body.get("event") or {}
            log.debug("slack %s/%s needs no answer", event.get("type"), event.get("subtype"))
            return
        msg = await self._inbound_once(c)
        if msg is None:
            return
        self._latest[msg.key] = (c.channel, c.ts)
        self._latest.move_to_end(msg.key)
        while len(self._latest) > 1024:
            self._latest.popitem(last=False)
        await self._put_inbound(msg)

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

    async def in_doubt(self, msg: OutboundMessage, since: datetime) -> None:
        await self.sender.in_doubt(msg, since)

    async def typing(self, key: ChatKey) -> None:
        """:eyes: on the message being answered (once; the daemon calls this repeatedly)."""
        target = self._latest.get(key)
        if target is None or target in self._eyes:
            return
        self._eyes.add(target)
        try:
            await self.sender.reaction(True, *target, WORKING_EMOJI)
        except DeliveryRejected:
            raise  # e.g. no reactions:write scope: not asked again for this message
        except ChannelError:
            self._eyes.discard(target)  # transient: the next refresh tries again
            raise

    async def _clear_working(self, msg: OutboundMessage) -> None:
        target = norm.parse_message_id(msg.reply_to) or self._latest.get(msg.key)
        if target is None or target not in self._eyes:
            return
        self._eyes.discard(target)
        try:
            await self.sender.reaction(False, *target, WORKING_EMOJI)
        except ChannelError as exc:  # cosmetic, and the answer is out: never resend it
            log.info("slack: could not remove :%s: from %s: %s", WORKING_EMOJI, target, exc)

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
