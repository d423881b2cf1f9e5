"""Per-chat workers: strict order within a chat, concurrency across chats.

A turn that raises never kills its worker: the user gets an apology with an error id
and the log gets the traceback under the same id. The dispatcher's own steps around a
turn (filters and their notices, counting the attempt, marking the message done) are
retried with backoff when they fail (a locked or full database), so one failed
statement leaves its message pending instead of losing it or stopping the loop.
Every message leaves the inbox journal once handled (or refused by a filter), so only
unfinished turns are replayed; one whose turns keep dying (the process crashed or was
killed mid-turn) is retired after ``max_attempts`` with one apology, and its chat moves on.
A graceful shutdown gives back the starts of the turns running when it begins, in one
write before it waits for them (and of any it starts while it waits): a turn it cuts
off at ``shutdown_timeout_s``, or a kill that lands before that (Docker's SIGKILL 10 s
after its SIGTERM), is answered after the next start, however often the operator
restarts meanwhile; a turn that finishes in time is done as usual.

Among replicas (:mod:`bot.cluster`), a replica runs only the chats whose partition it
holds, each turn under that lease's fence: a write refused because the lease moved on
(:class:`~bot.errors.FencedOff`) ends the turn at once, without a retry, an apology or a
done mark, since the replica holding the lease now runs the message again.

A turn cut off by a lost database connection (:class:`~bot.errors.StoreUnavailable`: a
server restart, a failover) is no fault of the message: it runs again in its lane, after
another counted start, instead of being apologized for; its keyed writes make the
replay safe, and ``max_attempts`` still bounds it.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from enum import Enum
from typing import TYPE_CHECKING, TypeVar

from bot.bus.base import Bus
from bot.cluster.base import Cluster, SingleProcess
from bot.cluster.fence import fenced
from bot.dispatcher.lanes import KeyedSerial
from bot.dispatcher.stops import TurnStops
from bot.errors import FencedOff, StoreUnavailable
from bot.messages import ChatKey, InboundMessage, OutboundKind, OutboundMessage, new_id
from bot.retrying import backoff, retry_after_failure

if TYPE_CHECKING:
    from tenacity import RetryCallState

log = logging.getLogger(__name__)

Handler = Callable[[InboundMessage], Awaitable[None]]
# A filter returns True to let the message through; it may reply on its own.
Filter = Callable[[InboundMessage], Awaitable[bool]]
# Forgets what a retired message's turns stored, so its text cannot poison the chat.
Forget = Callable[[InboundMessage], Awaitable[object]]
T = TypeVar("T")
R = TypeVar("R")

FINISHED_KEPT = 4096  # finished messages remembered against a second queueing
MAX_ATTEMPTS = 3  # turns started but never finished before a message is given up
GAVE_UP = (
    "Sorry, I could not answer that message: handling it failed several times. "
    "Please send it again, perhaps in other words."
)


class Verdict(Enum):
    RUN = "run"  # passed the filters: run the turn
    REFUSED = "refused"  # a filter refused it (and replied on its own)
    GIVE_UP = "give_up"  # its earlier turns kept dying


class Dispatcher:
    def __init__(
        self,
        bus: Bus,
        handler: Handler,
        *,
        max_concurrent: int = 64,
        idle_s: float = 300.0,
        filters: Sequence[Filter] = (),
        max_attempts: int = MAX_ATTEMPTS,
        retry_s: float = 0.05,
        retry_max_s: float = 30.0,
        forget: Forget | None = None,
        cluster: Cluster | None = None,
        stops: TurnStops | None = None,
    ) -> None:
        self._bus = bus
        self._stops = stops or TurnStops()  # /stop: ends a running turn as it arrives
        self._cluster = cluster or SingleProcess()
        # Messages queued or running here, so a replica's look at the shared inbox
        # (a partition taken over, a poll) never queues one twice.
        self._inflight: set[tuple[ChatKey, str]] = set()
        # ... and those just finished: a look at the inbox may have read one as pending.
        self._finished: OrderedDict[tuple[ChatKey, str], None] = OrderedDict()
        # Running turns whose start is held against their message (given back at most once).
        self._counted: dict[tuple[ChatKey, str], InboundMessage] = {}
        self._giving_back: set[asyncio.Task[None]] = set()
        self._forget = forget
        self._handler = handler
        self._filters = list(filters)
        self._max_attempts = max_attempts
        self._retry_s = (retry_s, retry_max_s)
        self._workers: KeyedSerial[ChatKey, InboundMessage] = KeyedSerial(
            self._run_turn, max_concurrent=max_concurrent, idle_s=idle_s, name="chat"
        )
        self.retries = 0

    @property
    def active_workers(self) -> int:
        return self._workers.lanes

    @property
    def busy_workers(self) -> int:
        return self._workers.busy

    @property
    def queued(self) -> int:
        """Messages waiting in chat lanes for the turn before them to finish."""
        return self._workers.queued()

    async def run(self) -> None:
        """Consume the inbound side of the bus until cancelled."""
        while True:
            msg = await self._bus.get_inbound()
            await self.submit(msg)

    async def submit(self, msg: InboundMessage) -> None:
        if self._workers.closing:
            # Left in the inbox journal: answered after the next start.
            log.info("stopping; message %s in %s deferred", msg.message_id, msg.key)
            return
        if not self._cluster.runs(msg.key):
            self._bus.passed_over(msg)  # read again by the poll if the chat comes here
            return  # journaled: the replica running its chat reads it from the inbox
        mark = (msg.key, msg.message_id)
        if mark in self._inflight or mark in self._finished:
            return
        self._inflight.add(mark)
        if self._stops.asks_to_stop(msg):
            self._stops.stop(msg)  # now, not after what it means (then it replies)
        else:
            self._stops.queued(msg)
        self._workers.submit(msg.key, msg)

    def idle(self, keep: Callable[[ChatKey], bool]) -> bool:
        """Whether no chat ``keep`` selects has a turn queued or running here."""
        return not any(keep(key) for key, _ in self._inflight)

    async def forsake(self, keep: Callable[[ChatKey], bool]) -> None:
        """Stop the chats ``keep`` selects: their lease went to another replica."""
        await self._workers.cancel(keep)
        self._stops.forsake(keep)
        self._inflight = {m for m in self._inflight if not keep(m[0])}

    async def _run_turn(self, msg: InboundMessage) -> None:
        mark = (msg.key, msg.message_id)
        try:
            with fenced(self._cluster.fence(msg.key)):
                await self._fenced_turn(msg)
        except FencedOff as exc:
            log.warning("turn in %s dropped: %s", msg.key, exc)
            self._give_back(msg)
        except asyncio.CancelledError:
            # A shutdown (its drain awaits this before the database closes) or a chat
            # forsaken (its lease moved on), not a crash: answered after the next start.
            if self._workers.closing or not self._cluster.runs(msg.key):
                self._give_back(msg)
            raise
        else:
            self._finished[mark] = None
            if len(self._finished) > FINISHED_KEPT:
                self._finished.popitem(last=False)
        finally:
            self._inflight.discard(mark)
            self._counted.pop(mark, None)

    def _give_back(self, *msgs: InboundMessage) -> None:
        """Turns stopped by their replica (the chat's lease moved on, or a graceful
        shutdown): their starts are not held against the messages, or churn under load
        and a slow turn's restarts would retire them as ones that kill the process. Only
        a crash leaves a start counted. Each start is given back once (a turn the stop
        gave back and then cut off is not given back again: a count never drops below
        its crashes). One write, unfenced, in a task of its own: the lane may be
        cancelled."""
        held = [m for m in msgs if self._counted.pop((m.key, m.message_id), None) is not None]
        if not held:
            return
        with fenced(None):
            task = asyncio.create_task(self._bus.inbound_interrupted(held))
        self._giving_back.add(task)
        task.add_done_callback(self._given_back)

    def _given_back(self, task: asyncio.Task[None]) -> None:
        self._giving_back.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.info("a stopped turn's start stays counted: %s", task.exception())

    async def _fenced_turn(self, msg: InboundMessage) -> None:
        if not self._stops.begins(msg):  # its person's /stop withdrew it while it waited
            if self._forget is not None:
                await self._steady(self._forget, msg)
            await self._steady(self._bus.inbound_done, msg)
            return
        verdict = await self._steady(self._admit, msg)
        while verdict is Verdict.RUN and not await self._turn(msg):
            verdict = await self._steady(self._count_start, msg)
        if verdict is Verdict.GIVE_UP:
            await self._steady(self._give_up, msg)
        else:
            await self._steady(self._bus.inbound_done, msg)

    async def _admit(self, msg: InboundMessage) -> Verdict:
        for keep in self._filters:
            if not await keep(msg):
                return Verdict.REFUSED
        return await self._count_start(msg)

    async def _count_start(self, msg: InboundMessage) -> Verdict:
        """Count the turn's start (again, for a turn the database cut off: the filters
        passed already), committed before it runs: a turn that kills the process counts.
        One begun while the daemon stops is the stop's: its start is given back at once."""
        attempts = await self._bus.inbound_started(msg)
        self._counted[(msg.key, msg.message_id)] = msg
        if self._workers.closing:
            self._give_back(msg)
        return Verdict.GIVE_UP if attempts > self._max_attempts else Verdict.RUN

    async def _turn(self, msg: InboundMessage) -> bool:
        """Runs the turn; False when a lost database connection cut it off (run it again)."""
        try:
            if await self._stops.run(msg, lambda: self._handler(msg)) and self._forget:
                await self._steady(self._forget, msg)  # stopped: as if never asked
        except (asyncio.CancelledError, FencedOff):
            raise
        except StoreUnavailable as exc:
            log.warning("turn in %s cut off by the database (%s); running it again", msg.key, exc)
            return False
        except Exception:
            error_id = new_id()[:8]
            log.exception("turn failed in %s (error id %s)", msg.key, error_id)
            apology = OutboundMessage.reply(
                msg,
                (
                    "Sorry, something went wrong while handling that message "
                    f"(error id {error_id}). Please try again."
                ),
                OutboundKind.ERROR,
            )
            await self._steady(self._bus.put_outbound, apology)
        return True

    async def _give_up(self, msg: InboundMessage) -> None:
        log.error(
            "message %s in %s given up: %d turns started and never finished",
            msg.message_id,
            msg.key,
            self._max_attempts,
        )
        # One apology per message, however often this step is retried or replayed.
        once = f"gave-up:{msg.key}:{msg.message_id}"
        notice = OutboundMessage.reply(msg, GAVE_UP, OutboundKind.ERROR)
        await self._bus.put_outbound(replace(notice, idempotency_key=once))
        if self._forget is not None:
            await self._forget(msg)
        await self._bus.inbound_failed(msg)

    async def _steady(self, step: Callable[[T], Awaitable[R]], arg: T) -> R:
        """Run one step, retried with backoff until it succeeds (or the lane is cancelled)."""
        name = getattr(step, "__name__", "step")

        def report(state: RetryCallState) -> None:
            self.retries += 1
            error = state.outcome.exception() if state.outcome else None
            log.warning(
                "dispatcher step %s failed (%s: %s); retry %d in %.2f s",
                name,
                type(error).__name__,
                error,
                state.attempt_number,
                state.upcoming_sleep,
            )

        initial, max_s = self._retry_s
        return await retry_after_failure(
            lambda _n: step(arg),
            backoff(
                initial=initial,
                max_s=max_s,
                jitter=initial,
                before_sleep=report,
                final=(FencedOff,),
            ),
        )

    async def drain(self, timeout: float) -> bool:
        """Stop taking messages and wait for queued turns; True if all finished in time.

        The running turns' starts are given back first, in one write, not when the
        timeout cuts them off: a supervisor that kills the process before then (Docker
        waits 10 s, as long as the default timeout) must not count it as their crash,
        or three restarts during a slow reply would retire its message."""
        self._workers.closing = True
        self._give_back(*self._counted.values())
        finished = await self._workers.drain(timeout)
        if self._giving_back:  # before the database closes
            await asyncio.wait(list(self._giving_back))
        return finished
