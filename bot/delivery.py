"""Delivery: outbound messages leave the bus for their channel, in order per chat.

Every message is already in the outbox (DurableBus), so a failed send is retried
with exponential backoff (and after a restart) until the channel accepts it, or it
is given up after ``max_attempts`` or a permanent refusal, with an error logged.

A reply waiting for its retry holds its chat's later replies behind it (``HeldBehind``):
one failed send never lets the next answer overtake it. Other chats go on.

Each channel has its own lanes and its own cap on concurrent sends, so a platform that
makes its senders wait (a rate limit waited out in place, a slow API) never holds up
another platform's deliveries.

Replies are claimed in the outbox under this run's id as they leave the bus (a burst in
one transaction) and the claim is kept through retries: a message queued twice
(start-up resume and a reminder's catch-up fire) goes out once.

A chat that refuses the bot for good (ChatGone) or lives on under another id
(ChatMoved) is told to ``ChatEvents`` (the reminders service): what would post there
again is ended, or moved with it, and a moved chat's reply goes to its new id.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Literal, Protocol

from bot.bus.base import Bus
from bot.cluster.fence import Fence, fenced
from bot.delivery_order import HeldBehind
from bot.delivery_steps import DeliveryProgress, Steps
from bot.dispatcher.lanes import KeyedSerial
from bot.errors import ChatGone, ChatMoved, DeliveryRejected, FencedOff
from bot.media.entries import size_text
from bot.messages import Attachment, ChatKey, OutboundMessage, new_id, utcnow
from bot.ops.metrics import NO_METRICS, Metrics
from bot.retrying import backoff, retry_after_failure
from bot.store.base import Outbox
from channels.base import Channel, Sent, StateStore, SupportsUpload, can_lookup, can_upload

log = logging.getLogger(__name__)

CLAIM_ATTEMPTS = 8  # recording claims (a busy database) before leaving them to a restart
MARK_ATTEMPTS = 4  # recording a sent batch; if all fail it is re-sent after a restart


ANSWER_FILE = "answer.md"
DEFAULT_MAX_CHARS = 20_000
Step = tuple[str, Callable[[], Awaitable[Sent]]]  # a step's name, and what sends it


class ChatEvents(Protocol):
    """Who is told what a channel said of a chat itself (the reminders service)."""

    async def chat_gone(self, key: ChatKey, reason: str, *, thread_only: bool = False) -> int: ...
    async def chat_moved(self, key: ChatKey, new_chat_id: str) -> int: ...


class NoChatEvents:
    """Nobody to tell (tests, a delivery without reminders)."""

    async def chat_gone(self, key: ChatKey, reason: str, *, thread_only: bool = False) -> int:
        return 0

    async def chat_moved(self, key: ChatKey, new_chat_id: str) -> int:
        return 0


def cap_text(msg: OutboundMessage, max_chars: int, can_upload: bool) -> tuple[OutboundMessage, str]:
    """The message with at most ``max_chars`` characters of text, and the full text to
    attach ("" when nothing was cut). One runaway answer must not become a thousand
    posts; where the channel can upload, nothing of it is lost."""
    text = msg.text
    if len(text) <= max_chars:
        return msg, ""
    total = len(text)

    def note(hidden: int) -> str:
        if can_upload:
            return f"\n\n… [The answer is {total:,} characters; all of it is in {ANSWER_FILE}.]"
        return f"\n\n… [The answer was cut: {hidden:,} of its {total:,} characters are not shown.]"

    keep = max(0, max_chars - len(note(total)))
    line_end = text.rfind("\n", 0, keep)
    if line_end > keep * 4 // 5:  # end on a whole line when one is near
        keep = line_end
    cut = replace(msg, text=text[:keep].rstrip() + note(total - keep))
    return cut, text if can_upload else ""


async def deliver(
    channel: Channel,
    msg: OutboundMessage,
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
    steps: Steps | None = None,
) -> Sent:
    """Send the text (capped at ``max_chars``), then upload each attachment where the
    channel can, and the whole text when it was capped.

    A file the channel cannot take (no upload capability, over the platform's size limit,
    or the file is gone) is never dropped silently: the user is told which and why.
    ``steps``: what an earlier attempt already sent (the text, a file), skipped here;
    the text's parts are resumed by the channel itself.
    """
    uploading = can_upload(channel)
    msg, full_text = cap_text(msg, max_chars, uploading)
    uploads = [a for a in msg.attachments if uploading]
    unsent = [a.name or a.file_id for a in msg.attachments if a not in uploads]
    if unsent:
        note = "(Could not send here: " + ", ".join(unsent) + ")"
        msg = replace(msg, text=f"{msg.text}\n\n{note}".strip(), attachments=tuple(uploads))
    todo: list[Step] = [("text", functools.partial(channel.send, msg))]
    uploader = channel
    if can_upload(uploader):
        todo += _uploads(channel, uploader, msg, uploads, full_text)
    steps = steps if steps is not None else Steps()
    ids: list[str] = []
    for i, (name, send) in enumerate(todo):
        ids += (await steps.step(name, send, last=i == len(todo) - 1)).ids
    return Sent(tuple(ids))


def _uploads(
    channel: Channel,
    uploader: SupportsUpload,
    msg: OutboundMessage,
    files: list[Attachment],
    full_text: str,
) -> list[Step]:
    """The steps after the text: each file (by its index), then the whole text."""
    todo: list[Step] = [
        (f"file:{i}", functools.partial(_upload, channel, uploader, msg, a, i))
        for i, a in enumerate(files)
    ]
    if full_text:
        data = full_text.encode("utf-8")
        todo.append((ANSWER_FILE, functools.partial(uploader.upload, msg.key, ANSWER_FILE, data)))
    return todo


async def _upload(
    channel: Channel,
    uploader: SupportsUpload,
    msg: OutboundMessage,
    attachment: Attachment,
    index: int,
) -> Sent:
    """One file, its size checked against the platform's limit before it is read."""
    path, limit = Path(attachment.file_id), uploader.upload_limit()
    try:
        size = (await asyncio.to_thread(path.stat)).st_size
        if size > limit:
            why = f"it is {size_text(size)}, over the {size_text(limit)} this platform takes"
            raise ValueError(why)
        data = await asyncio.to_thread(path.read_bytes)
    except OSError as exc:
        text = f"(Could not send the file {attachment.name}: {exc.strerror})"
    except ValueError as exc:
        text = f"(Could not send the file {attachment.name}: {exc})"
    else:
        return await uploader.upload(msg.key, attachment.name, data, attachment.caption)
    # A delivery of its own: to the channel the note is not the answer's text (the parts
    # it resumes, the key a post carries or is looked up by), so never taken for it.
    key = f"{msg.delivery_key}#file:{index}"
    note = replace(msg, text=text, attachments=(), reply_to=None, preview_id=None)
    return await channel.send(replace(note, idempotency_key=key))


class Delivery:
    def __init__(
        self,
        outbox: Outbox,
        channels: Mapping[str, Channel],
        *,
        max_attempts: int = 12,
        max_concurrent: int = 64,  # sends at once: platforms rate-limit per bot, not per chat
        metrics: Metrics = NO_METRICS,
        max_chars: int = DEFAULT_MAX_CHARS,
        runs: Callable[[ChatKey], bool] = lambda _key: True,
        fence: Callable[[ChatKey], Fence | None] = lambda _key: None,
        state: StateStore | None = None,
        chat_events: ChatEvents | None = None,
    ) -> None:
        self._outbox = outbox
        self._chat_events = chat_events or NoChatEvents()
        # Among replicas: whether this one still runs the chat. A reply for a chat whose
        # lease moved on is left to the replica that took it (its claim takes the row).
        # Asked when the row is claimed (the claim is a write under the chat's fence)
        # and again right before the platform is called.
        self._runs = runs
        self._fence = fence
        # Replies being sent, or sent and not yet marked so: a partition whose chats
        # have one is not handed to another replica (whose claim would take the row).
        self._unsettled: dict[str, ChatKey] = {}
        # Replies claimed here and not yet through (sent, given up, left to another
        # replica; a retry's wait included): their rows are this run's ('sending'), which
        # a claim of this run never takes again (see _claim_and_submit).
        self._claimed: set[str] = set()
        self._held = HeldBehind()  # per chat: a reply waiting for its retry, then the rest
        self._max_chars = max_chars
        self._metrics = metrics
        self._channels = channels
        self._max_attempts = max_attempts
        self._max_concurrent = max_concurrent
        self._lanes: dict[str, KeyedSerial[ChatKey, OutboundMessage]] = {}
        self._closing = False
        self._timers: set[asyncio.TimerHandle] = set()
        # Sent keys are marked in batches: one transaction per burst, not one per message.
        self._sent_keys: list[str] = []
        self._marker: asyncio.Task[None] | None = None
        self._run_id = new_id()  # whose claims on outbox rows are ours
        # Per answer of several steps (text, files) not yet marked sent, the steps
        # already sent; kept in ``state`` too, so a retry after a restart skips them.
        self._progress = DeliveryProgress(state)
        self._handing_over = asyncio.Lock()  # held while a burst is claimed
        # Rows a dead run was sending: posted or not, nobody knows (key -> queued at).
        self._in_doubt: dict[str, datetime] = {}
        self.sent = 0
        self.failed = 0

    async def route(self, bus: Bus) -> None:
        """Runs until cancelled: claims what the bus yields, a burst at a time, and hands
        each claimed reply to its chat's lane."""
        await self.look_up_in_doubt()
        while True:
            batch = [await bus.get_outbound()]
            while bus.outbound_depth():
                batch.append(await bus.get_outbound())
            await self._claim_and_submit(batch)

    async def look_up_in_doubt(self) -> None:
        """Reads the rows another run was sending: at start (a run that died), and among
        replicas before a gained partition's rows are queued (a replica that died or lost
        it). Each may have reached the chat just before that run ended, its sent mark
        never written: where the channel can look a post up, it does so before posting
        it again."""
        try:
            found = await self._outbox.in_doubt(self._run_id)
        except Exception:  # never stops delivery: at worst such a row is posted again
            log.exception("could not read the deliveries another run left in doubt")
            return
        new = found.keys() - self._in_doubt.keys()
        self._in_doubt.update(found)
        if new:
            log.info("%d deliveries were being sent by a run that ended", len(new))

    async def take_remaining(self, bus: Bus) -> None:
        """At shutdown: hands over the replies still on the bus, after :meth:`route` stops."""
        await asyncio.sleep(0)  # let the router hand the last replies to delivery
        async with self._handing_over:  # and finish claiming the burst it holds
            pass
        batch = []
        while bus.outbound_depth():
            batch.append(await bus.get_outbound())
        if batch:
            await self._claim_and_submit(batch)

    async def _claim_and_submit(self, batch: list[OutboundMessage]) -> None:
        """Only claimed rows are sent: a copy of a row this run already holds, or one
        sent meanwhile, is dropped here. A claim the store cannot record (database busy)
        is retried with backoff; one never recorded stays pending for the next start."""
        async with self._handing_over:
            # A copy of a reply already claimed here (the shared inbox's reader queues
            # the chats' unsent rows again on every wake-up) is dropped without asking
            # the store, whose claim would take nothing: one statement less for each.
            fresh = [m for m in batch if m.delivery_key not in self._claimed]
            for msg in await self._claim(fresh) if fresh else []:
                self._claimed.add(msg.delivery_key)
                self.submit(msg)

    async def _claim(self, batch: list[OutboundMessage]) -> list[OutboundMessage]:
        """Claimed per fence (one, unfenced, in one process): among replicas a claim is
        a write under the chat partition's lease, refused once another replica holds it."""
        groups: dict[Fence | None, list[OutboundMessage]] = {}
        for msg in batch:
            fence = self._fence_of(msg.key)
            if fence is not False:
                groups.setdefault(fence, []).append(msg)
        claimed: list[OutboundMessage] = []
        for fence, msgs in groups.items():
            with fenced(fence):
                claimed += await self._claim_fenced(msgs)
        if len(claimed) < len(batch):
            log.debug(
                "%d deliveries already sent, being sent or another replica's; skipped",
                len(batch) - len(claimed),
            )
        return claimed

    def _fence_of(self, key: ChatKey) -> Fence | Literal[False] | None:
        """The fence a claim for ``key`` carries; False: this replica does not run it."""
        if not self._runs(key):
            return False
        try:
            return self._fence(key)
        except FencedOff:
            return False

    async def _claim_fenced(self, batch: list[OutboundMessage]) -> list[OutboundMessage]:
        try:
            return await retry_after_failure(
                lambda _attempt: self._outbox.claim(batch, self._run_id),
                backoff(initial=0.05, max_s=5.0, attempts=CLAIM_ATTEMPTS, final=(FencedOff,)),
            )
        except FencedOff:
            log.info("%d deliveries left to the replica now running their chats", len(batch))
        except Exception:
            log.exception(
                "could not claim %d deliveries; they resume at the next start", len(batch)
            )
        return []

    def settled(self, keep: Callable[[ChatKey], bool]) -> bool:
        """Whether no chat ``keep`` selects has a reply being sent or not yet marked sent."""
        return not any(keep(key) for key in self._unsettled.values())

    def submit(self, msg: OutboundMessage) -> None:
        """Queue a claimed reply for its chat's lane (each channel has its own)."""
        lanes = self._lanes.get(msg.key.channel)
        if lanes is None:
            lanes = KeyedSerial(
                self._send,
                max_concurrent=self._max_concurrent,
                idle_s=60.0,
                name=f"send:{msg.key.channel}",
            )
            self._lanes[msg.key.channel] = lanes
        lanes.submit(msg.key, msg)

    def delivering(self, key: ChatKey) -> bool:
        """Whether a reply to the chat is being sent or waits for its retry: a new post
        there now (a streamed preview of the next answer) would land above it."""
        return key in self._held or any(k == key for k in self._unsettled.values())

    async def _send(self, msg: OutboundMessage) -> None:
        """Sends ``msg`` (unless a reply of its chat waits for its retry: then it waits
        too), then, in this lane, the replies held behind it, until one fails again."""
        if self._held.hold(msg):
            return
        current: OutboundMessage | None = msg
        while current is not None:
            retry_in = await self._send_one(current)
            if retry_in is not None:
                self._held.retrying(current)
                self._retry_later(current, retry_in)
                return
            current = self._held.through(current)

    async def _send_one(self, msg: OutboundMessage) -> float | None:
        """One attempt; the seconds until its retry, or None once it is through."""
        retry_in: float | None = None
        try:
            retry_in = await self._send_claimed(msg)
        except Exception:  # its failure was not recorded: as ever, it resumes at the next start
            log.exception("delivery %s to %s broke off", msg.delivery_key, msg.key)
        finally:
            if retry_in is None:
                self._claimed.discard(msg.delivery_key)
        return retry_in

    async def _send_claimed(self, msg: OutboundMessage) -> float | None:
        if not self._runs(msg.key):
            log.info("delivery %s left to the replica now running %s", msg.delivery_key, msg.key)
            return None
        self._unsettled[msg.delivery_key] = msg.key
        try:
            sent = await self._attempt(msg)
        except Exception as exc:
            self._unsettled.pop(msg.delivery_key, None)
            return await self._failed(msg, exc)
        except BaseException:
            self._unsettled.pop(msg.delivery_key, None)
            raise
        if not sent:
            self._unsettled.pop(msg.delivery_key, None)
            return None
        self.sent += 1
        self._metrics.message_out(msg.key.channel, msg.kind.value)
        self._sent_keys.append(msg.delivery_key)
        if self._marker is None or self._marker.done():
            self._marker = asyncio.create_task(self._mark_sent())
        return None

    async def _attempt(self, msg: OutboundMessage) -> bool:
        """One try at the platform; False: left to the replica that took the chat."""
        channel = self._channels.get(msg.key.channel)
        if channel is None:
            raise DeliveryRejected(f"no channel named {msg.key.channel!r} is running")
        await self._look_up_first(channel, msg)
        if not self._runs(msg.key):  # the last look, right before the platform call
            log.info("delivery %s left to the replica now running %s", msg.delivery_key, msg.key)
            return False
        several = bool(msg.attachments) or len(msg.text) > self._max_chars
        steps = await self._progress.of(msg, several)
        try:
            await deliver(channel, msg, max_chars=self._max_chars, steps=steps)
        except ChatMoved as exc:  # the steps already out stay done; the rest go there
            await deliver(
                channel, await self._moved(msg, exc), max_chars=self._max_chars, steps=steps
            )
        return True  # its steps are forgotten once it is marked sent (_mark_sent)

    async def _moved(self, msg: OutboundMessage, exc: ChatMoved) -> OutboundMessage:
        """``msg`` for the chat's new id (same thread); what else belongs to the chat
        (its reminders) is moved there too. The old chat's message ids mean nothing there."""
        log.info(
            "%s lives on as chat %s: delivery %s goes there", msg.key, exc.chat_id, msg.delivery_key
        )
        try:
            await self._chat_events.chat_moved(msg.key, exc.chat_id)
        except Exception:  # the reply still goes; the next refused fire moves them again
            log.exception("the reminders of %s could not be moved to %s", msg.key, exc.chat_id)
        key = replace(msg.key, chat_id=exc.chat_id)
        return replace(msg, key=key, reply_to=None, preview_id=None)

    async def _failed(self, msg: OutboundMessage, exc: Exception) -> float | None:
        """A refusal gives up at once (None); another failure is retried with backoff:
        the seconds until its retry."""
        self.failed += 1
        self._metrics.delivery_failed(msg.key.channel)
        if isinstance(exc, DeliveryRejected):
            # A person blocking the bot, or removing it from a group, is routine: not an error.
            level = logging.INFO if isinstance(exc, ChatGone) else logging.ERROR
            log.log(level, "delivery %s to %s refused: %s", msg.delivery_key, msg.key, exc)
            await self._progress.forget(msg.delivery_key)
            await self._outbox.give_up(msg, str(exc))
            if isinstance(exc, ChatGone):
                await self._chat_gone(msg.key, exc)
            return None
        error = f"{type(exc).__name__}: {exc}"
        attempts, due = await self._outbox.mark_failed(msg, error)
        if attempts >= self._max_attempts:
            log.error(
                "delivery %s to %s given up after %d attempts: %s",
                msg.delivery_key,
                msg.key,
                attempts,
                error,
            )
            await self._progress.forget(msg.delivery_key)
            await self._outbox.give_up(msg, error)
            return None
        delay = max(0.0, (due - utcnow()).total_seconds())
        log.warning(
            "delivery %s to %s failed (%s); retry %d in %.1f s",
            msg.delivery_key,
            msg.key,
            error,
            attempts,
            delay,
        )
        return delay

    async def _chat_gone(self, key: ChatKey, exc: ChatGone) -> None:
        """Whatever would post there again is ended (one line per chat, said there)."""
        try:
            await self._chat_events.chat_gone(key, str(exc), thread_only=exc.thread_only)
        except Exception:  # the next refusal there tries again
            log.exception("the reminders of %s, which refuses the bot, were not ended", key)

    async def _look_up_first(self, channel: object, msg: OutboundMessage) -> None:
        """A row a dead run was sending: the channel looks it up before posting, where
        it can (where it cannot, the send itself is the window of a double post)."""
        since = self._in_doubt.pop(msg.delivery_key, None)
        if since is not None and can_lookup(channel):
            await channel.in_doubt(msg, since)

    async def _mark_sent(self) -> None:
        while self._sent_keys:
            keys, self._sent_keys = self._sent_keys, []
            mark = functools.partial(self._mark_keys, keys)
            try:
                await retry_after_failure(
                    mark,
                    # a busy database: a few quick retries
                    backoff(initial=0.05, max_s=1.0, attempts=MARK_ATTEMPTS),
                )
            except Exception:
                # Left claimed: at worst re-sent after a restart, never lost (and the
                # steps of it already sent are kept for that send: they are skipped).
                log.exception("could not mark %d deliveries as sent", len(keys))
                marked = False
            else:
                marked = True
            for key in keys:
                self._unsettled.pop(key, None)
            for key in keys if marked else ():
                await self._progress.forget(key)

    async def _mark_keys(self, keys: list[str], _attempt: int) -> None:
        await self._outbox.mark_sent_keys(keys)

    def _retry_later(self, msg: OutboundMessage, delay: float) -> None:
        loop = asyncio.get_running_loop()

        def fire() -> None:
            self._timers.discard(handle)
            if not self._closing:
                self.submit(msg)

        handle = loop.call_later(delay, fire)
        self._timers.add(handle)

    def pending_retries(self) -> int:
        return len(self._timers)

    async def drain(self, timeout: float) -> bool:
        """Flush queued sends; scheduled retries, and the replies of their chats held
        behind them, stay in the outbox for the next start (which sends them in order)."""
        self._closing = True
        for handle in self._timers:
            handle.cancel()
        self._timers.clear()
        drains = [lanes.drain(timeout) for lanes in self._lanes.values()]
        finished = all(await asyncio.gather(*drains))
        if self._marker is not None:
            await self._marker
        return finished
