"""The Discord channel: a discord.py gateway client that journals turns and posts answers.

discord.py owns the connection: heartbeats, RESUME after a dropped socket (the gateway
replays what was missed), a fresh IDENTIFY when the session is invalid, and REST rate
limits. Discord has no acknowledgement to withhold, so a message is handed to
``put_inbound`` as it arrives; its Discord id is the ``message_id``, so a replay after
a resume is dropped by the daemon's inbox. What was said while no session was up (the
daemon was down, or the gateway dropped the session) is read from each conversation's
history after every READY and RESUMED (see :meth:`DiscordChannel.on_gateway_up`).
Access (``allow_from``) is the daemon's middleware, by ``msg.sender``; this module only
filters what is not a turn at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from datetime import UTC, datetime
from logging import ERROR

import aiohttp
import discord

from bot.errors import ChannelError
from bot.messages import ChatKey, OutboundMessage
from channels.base import CAUGHT_UP, CatchUpWindow, ChannelHealth, PutInbound, Sent, StateStore
from channels.catchup import Cursors, catch_up
from channels.discord.client import GatewayClient, intents
from channels.discord.lookup import Doubts
from channels.discord.normalize import CHANNEL, addressed, chat_key, ignored, to_inbound, unreadable
from channels.discord.order import PerConversation
from channels.discord.preview import MIN_INTERVAL_S
from channels.discord.seams import DEFAULT_GATEWAY, point_gateway_at, point_rest_at
from channels.discord.send import MAX_CHARS, MAX_UPLOAD_BYTES, DiscordSender
from channels.discord.settings import DiscordSettings
from channels.health import LinkHealth
from channels.reconnects import Reconnects
from channels.remembered import Remembered

log = logging.getLogger(__name__)

HOW_TO_ENABLE_CONTENT = (
    "Developer Portal (https://discord.com/developers/applications) -> your application "
    "-> Bot -> Privileged Gateway Intents -> enable MESSAGE CONTENT INTENT, then restart"
)
UNREADABLE_NOTICE = (
    "I can't read messages here: this bot was not granted Discord's Message Content "
    "intent. The bot's owner can enable it in the Discord Developer Portal (Bot -> "
    "Privileged Gateway Intents -> Message Content Intent). Until then, mention me "
    "directly or send me a DM."
)
RETRY_S = (1.0, 60.0)  # first and longest wait between failed (re)connects
RECONNECT_LINES = ("Attempting a reconnect in",)  # discord.client, once per failed attempt


class DiscordChannel:
    name = CHANNEL
    trusted = False

    def __init__(
        self,
        settings: DiscordSettings,
        *,
        state: StateStore | None = None,
        identify_delay_s: float = 5.0,
        guild_ready_timeout: float = 2.0,
        standby: bool = False,
    ) -> None:
        self.settings = settings
        # Among replicas: only the one holding the gateway's lease connects to it (two
        # sessions on one shard would each get every event); the others send over REST.
        self._receiving = not standby
        self._identify_delay_s = identify_delay_s
        self._guild_ready_timeout = guild_ready_timeout
        self._state = state
        self._doubts = Doubts()  # outlives a sender rebuilt without the content intent
        self.client, self.sender = self._build(content=True)
        self._put_inbound: PutInbound | None = None
        self._task: asyncio.Task[None] | None = None
        self._gateway_up = False
        self.link = LinkHealth(CHANNEL, "gateway connection", degrade_after=1)
        # discord.py's own reconnect loop logs each attempt as an ERROR with a traceback:
        # folded into ``link`` (one degraded line, one recovered line), the rest DEBUG.
        self._reconnects = Reconnects(["discord.client"], self.link, failed=RECONNECT_LINES)
        self._state_changed = asyncio.Event()
        # discord.py runs each event as a task: a catch-up holds ``_order`` so live
        # messages wait behind it; then each conversation keeps its arrival order.
        self._order = asyncio.Lock()
        self._conversations = PerConversation()
        # Threads the bot posted into count as addressed; channels told once that the bot
        # cannot read them are not told again. Both survive a restart (the StateStore).
        self._threads = Remembered(state, "discord:thread")
        self._noticed = Remembered(state, "discord:unreadable-notice")
        self._cursors = Cursors(state, "discord:seen")  # per channel or thread: last id
        self._window: CatchUpWindow | None = None
        self._warned_content = False
        self._gateway_known = False  # DEFAULT_GATEWAY points where this bot's settings say

    def _build(self, *, content: bool) -> tuple[GatewayClient, DiscordSender]:
        client = GatewayClient(
            self,
            intents=intents(content=content),
            identify_delay_s=self._identify_delay_s,
            guild_ready_timeout=self._guild_ready_timeout,
        )
        token = self.settings.token.get_secret_value()
        sender = DiscordSender(
            client, self._state, token, self._doubts, link_previews=self.settings.link_previews
        )
        return client, sender

    @property
    def connected(self) -> bool:
        """True between READY/RESUMED and the next disconnect (standing by: logged in)."""
        if not self._receiving:
            return self.client.user is not None and not self.client.is_closed()
        return self._gateway_up and not self.client.is_closed()

    def health(self) -> ChannelHealth:
        """Up, or why not: the last failure of the connection loop, else that discord.py
        is reconnecting a dropped session on its own."""
        if self.connected:
            return ChannelHealth(True)
        failing = self.link.report()
        return failing if not failing.ok else ChannelHealth(False, "gateway not connected")

    @property
    def handling(self) -> int:
        """Conversations with a message being handled (or waiting behind one) now."""
        return len(self._conversations)

    def on_gateway_state(self, up: bool) -> None:
        if up != self._gateway_up:
            log.info("discord gateway %s", "connected" if up else "disconnected")
        self._gateway_up = up
        self._state_changed.set()  # wake every waiter, then arm a fresh event
        self._state_changed = asyncio.Event()

    async def wait_connected(self, up: bool = True) -> None:
        """Until ``connected`` is ``up`` (health probes and tests; wrap in a timeout)."""
        while self.connected != up:
            await self._state_changed.wait()

    def catch_up_within(self, window: CatchUpWindow) -> None:
        self._window = window

    @property
    def receive_lease(self) -> str:
        """The gateway: one session per shard (this client runs one, shard 0)."""
        return "discord:shard:0"

    async def receive(self, on: bool) -> None:
        """Connect to the gateway (this replica took its lease), or close the session
        (the lease lapsed or moved): REST sending goes on either way."""
        self._receiving = on
        if on and (self._task is None or self._task.done()):
            self._task = self._reconnects.task(self._run(), "discord-gateway")
        elif not on and self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
            ws = self.client.ws
            if ws is not None:
                await ws.close(code=1000)  # the session ends: the next holder identifies
            self.on_gateway_state(False)

    async def start(self, put_inbound: PutInbound) -> None:
        self._put_inbound = put_inbound
        await self._cursors.load()
        point_rest_at(self.settings.api_base)
        try:
            await self._login()
        except discord.LoginFailure as exc:
            raise ChannelError(f"discord token refused: {exc}") from exc
        except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            log.warning("discord unreachable at start (%s); retrying in the background", exc)
        self._task = self._reconnects.task(self._run(), "discord-gateway")

    async def _login(self) -> None:
        """``users/@me`` (a refused token raises LoginFailure), then which gateway to use."""
        if self.client.user is None:
            await self.client.login(self.settings.token.get_secret_value())
            log.info("discord: logged in as %s", self.client.user)
        if self._gateway_known:
            return
        url = self.settings.gateway_url
        if not url:  # ask the REST root which gateway to use (a proxy or test may differ)
            try:
                _, url, _ = await self.client.http.get_bot_gateway()
            except discord.GatewayNotFound:
                log.warning("discord GET /gateway/bot failed; using discord.py's default")
                url = str(DEFAULT_GATEWAY)
        point_gateway_at(url)
        self._gateway_known = True

    async def _run(self) -> None:
        """Log in if start could not, then (unless standing by) let discord.py hold the
        gateway; retry on failure."""
        failures = 0
        while not self.client.is_closed():
            try:
                await self._login()
                if not self._receiving:
                    return  # standing by: logged in to send; another replica holds the gateway
                await self.client.connect(reconnect=True)
            except discord.PrivilegedIntentsRequired:
                if not self.client.intents.message_content:
                    self.link.failed("a privileged intent refused; the channel stays off", ERROR)
                    return
                await self._without_content()
            except discord.LoginFailure as exc:
                self.link.failed(f"token refused ({exc}); set channels.discord.token", ERROR)
                return
            except Exception as exc:  # network, 5xx, a close code discord.py gives up on
                failures = 1 if self._gateway_up else failures + 1
                delay = min(RETRY_S[1], RETRY_S[0] * 2.0 ** (failures - 1))
                self.link.failed(repr(exc))  # logged once per streak, with the reason
                log.debug("discord gateway: retry in %.1f s", delay)
                await asyncio.sleep(delay)
            finally:
                self.on_gateway_state(False)

    async def _without_content(self) -> None:
        """Gateway close 4014: the portal does not grant Message Content. Carry on without
        it: DMs and mentions of the bot still carry their text, and where a message arrives
        empty the channel is told once why the bot cannot answer."""
        log.error(
            "discord refused the Message Content intent; continuing without it (DMs and "
            "mentions only). %s",
            HOW_TO_ENABLE_CONTENT,
        )
        await self.client.close()
        await self.sender.previews.close()
        self.client, self.sender = self._build(content=False)

    async def on_gateway_up(self) -> None:
        """READY or RESUMED: catch up before any message of the session is handled
        (discord.py dispatched this event first, so it takes the order lock first)."""
        self.on_gateway_state(True)
        self.link.succeeded()
        if self._window is None:
            return
        async with self._order:
            await catch_up(self._cursors, self._window, self._read_after, "discord")

    async def _read_after(self, conversation: str, last: str, floor: float) -> None:
        """The latest messages after ``last`` (and after ``floor``), handled in order."""
        assert self._window is not None
        after = max(int(last), discord.utils.time_snowflake(_utc(floor), high=True))
        cid = int(conversation)
        channel = self.client.get_channel(cid) or await self.client.fetch_channel(cid)
        if not isinstance(channel, discord.abc.Messageable):
            return
        found = channel.history(
            limit=self._window.max_messages, after=discord.Object(after), oldest_first=False
        )
        for m in reversed([m async for m in found]):
            await self._handle(m, caught_up=True)
            self._cursors.saw(conversation, str(m.id), m.created_at.timestamp())

    async def on_gateway_message(self, message: discord.Message) -> None:
        async with self._order:
            pass  # a catch-up (messages from before this gateway connection) goes first
        async with self._conversations.turn(message.channel.id):
            await self._handle(message)

    async def _handle(self, m: discord.Message, *, caught_up: bool = False) -> None:
        try:
            await self._accept(m, caught_up)
        except Exception:  # one unreadable message or a failed journal must not kill events
            log.exception("discord message %s could not be handled", m.id)

    async def _accept(self, m: discord.Message, caught_up: bool) -> None:
        me = self.client.user
        if me is None or self._put_inbound is None or ignored(m, me.id):
            return
        thread = m.channel if isinstance(m.channel, discord.Thread) else None
        threads = {thread.id} if thread and await self._threads.has(thread.id) else set()
        if not addressed(m, me.id, self.settings.group_policy, threads):
            return
        if unreadable(m):
            await self._tell_unreadable(m)
            return
        msg = to_inbound(m, me.id, self._channel_name)
        if caught_up:
            msg = dataclasses.replace(msg, extras={**msg.extras, CAUGHT_UP: True})
        await self._put_inbound(msg)
        self._cursors.saw(str(m.channel.id), str(m.id), m.created_at.timestamp())

    def _channel_name(self, channel_id: int) -> str | None:
        """A mentioned channel's name from discord.py's cache (a DM naming a server's
        channel): never a request per message."""
        name = getattr(self.client.get_channel(channel_id), "name", None)
        return name if isinstance(name, str) and name else None

    async def _tell_unreadable(self, m: discord.Message) -> None:
        """Log once how to grant the intent, and tell each channel once that we cannot read."""
        if not self._warned_content:
            self._warned_content = True
            log.warning(
                "discord message %s arrived without its text: the Message Content intent is "
                "not granted. %s",
                m.id,
                HOW_TO_ENABLE_CONTENT,
            )
        if not await self._noticed.add(m.channel.id):
            return
        try:
            await self.sender.notice(chat_key(m), UNREADABLE_NOTICE, reply_to=str(m.id))
        except ChannelError as exc:
            log.warning("discord: could not post the unreadable notice in %s: %s", m.channel, exc)

    async def send(self, msg: OutboundMessage) -> Sent:
        sent = await self.sender.send(msg)
        if msg.key.thread_id and msg.key.thread_id.isdigit():
            await self._threads.add(int(msg.key.thread_id))  # the bot is part of it now
        return sent

    async def in_doubt(self, msg: OutboundMessage, since: datetime) -> None:
        """SupportsLookup: looked up in the channel's recent history before it is posted."""
        await self.sender.in_doubt(msg, since)

    async def typing(self, key: ChatKey, message_id: str | None = None) -> None:
        await self.sender.typing(key)

    async def edit(self, key: ChatKey, message_id: str, text: str) -> None:
        await self.sender.edit(key, message_id, text)

    async def react(self, key: ChatKey, message_id: str, emoji: str) -> None:
        await self.sender.react(key, message_id, emoji)

    async def unreact(self, key: ChatKey, message_id: str, emoji: str) -> None:
        await self.sender.unreact(key, message_id, emoji)

    def upload_limit(self) -> int:
        return MAX_UPLOAD_BYTES  # what any chat takes without a server boost

    async def upload(self, key: ChatKey, name: str, data: bytes, caption: str = "") -> Sent:
        return await self.sender.upload(key, name, data, caption)

    async def download(self, file_id: str) -> bytes:
        """An inbound attachment: ``Attachment.file_id`` is its URL."""
        return await self.sender.download(file_id)

    # -- streamed previews (SupportsPreview; see preview.py) ---------------------------
    def preview_limit(self, key: ChatKey) -> int:
        return MAX_CHARS

    def preview_interval(self, key: ChatKey, configured: float) -> float:
        return max(configured, MIN_INTERVAL_S)

    async def post_preview(self, key: ChatKey, text: str, reply_to: str | None) -> str:
        return await self.sender.post_preview(key, text, reply_to)

    async def edit_preview(self, key: ChatKey, message_id: str, text: str) -> None:
        await self.sender.edit_preview(key, message_id, text)

    async def delete_preview(self, key: ChatKey, message_id: str) -> None:
        await self.sender.delete_preview(key, message_id)

    async def stop(self) -> None:
        await self.client.close()
        await self.sender.previews.close()
        await self._cursors.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self._reconnects.detach()
        self.on_gateway_state(False)


def _utc(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)
