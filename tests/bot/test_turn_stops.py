"""TurnStops on its own: the cancellation a /stop sends lands in the turn and is taken
back when the turn ends, so the lane worker goes on; any other cancellation of the
worker, alone or besides a /stop, still cancels it. A /stop also withdraws its person's
messages waiting in the chat (theirs only, and only those sent before it)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bot.dispatcher.stops import NOTHING, STOPPED, StoppedAfter, TurnStops, stopped_reply
from bot.messages import ChatKey, InboundMessage, MessageKind

KEY = ChatKey("test", "g1")


def said(text: str, user: str = "ann", kind: MessageKind = MessageKind.USER) -> InboundMessage:
    return InboundMessage(key=KEY, user_id=user, text=text, kind=kind)


class Turn:
    """A turn that waits until it is let go (or cancelled); ``swallow``: it catches the
    cancellation and finishes anyway."""

    def __init__(self, swallow: bool = False) -> None:
        self.started = asyncio.Event()
        self.go = asyncio.Event()
        self.swallow = swallow

    async def __call__(self) -> None:
        self.started.set()
        try:
            await self.go.wait()
        except asyncio.CancelledError:
            if not self.swallow:
                raise


async def worker(stops: TurnStops, msg: InboundMessage, turn: Turn) -> tuple[bool, int]:
    """A lane worker's view: the turn's outcome and the cancellations left pending on it."""
    stopped = await stops.run(msg, turn)
    task = asyncio.current_task()
    assert task is not None
    await asyncio.sleep(0)  # a cancellation left pending would land here
    return stopped, task.cancelling()


async def started(stops: TurnStops, msg: InboundMessage, turn: Turn) -> asyncio.Task[Any]:
    task = asyncio.create_task(worker(stops, msg, turn))
    await asyncio.wait_for(turn.started.wait(), 5)
    return task


async def test_a_stop_ends_the_turn_and_the_worker_goes_on() -> None:
    stops, turn = TurnStops(), Turn()
    long, stop = said("a long one"), said("/stop")
    task = await started(stops, long, turn)
    assert stops.asks_to_stop(stop)
    stops.stop(stop)
    assert await task == (True, 0)
    assert await stops.reply(stop, "") == STOPPED


async def test_a_shutdown_beside_a_stop_still_cancels_the_worker() -> None:
    stops, turn = TurnStops(), Turn()
    task = await started(stops, said("a long one"), turn)
    stops.stop(said("/stop"))
    task.cancel()  # the shutdown, in the same tick
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_turn_that_swallows_the_stop_leaves_nothing_pending() -> None:
    stops, turn = TurnStops(), Turn(swallow=True)
    stop = said("/stop")
    task = await started(stops, said("a long one"), turn)
    stops.stop(stop)
    assert await task == (False, 0)  # answered anyway: not reported as stopped
    assert await stops.reply(stop, "") == NOTHING


async def test_nobody_else_and_no_follow_up_stops_a_turn() -> None:
    stops, turn = TurnStops(), Turn()
    task = await started(stops, said("a long one"), turn)
    by_bob, follow_up = said("/stop", user="bob"), said("/stop", kind=MessageKind.SCHEDULED)
    assert not stops.asks_to_stop(follow_up)
    stops.stop(by_bob)
    turn.go.set()
    assert await task == (False, 0)
    assert await stops.reply(by_bob, "") == NOTHING
    assert await stops.reply(said("/stop"), "") == NOTHING  # nothing was running


def waiting(stops: TurnStops, *msgs: InboundMessage) -> tuple[InboundMessage, ...]:
    for msg in msgs:
        stops.queued(msg)
    return msgs


async def test_a_stop_withdraws_its_persons_waiting_messages_only() -> None:
    stops = TurnStops()
    ann1, bob1, ann2 = waiting(stops, said("one"), said("bob's", user="bob"), said("two"))
    follow_up, stop = waiting(stops, said("remind", kind=MessageKind.SCHEDULED))[0], said("/stop")
    stops.stop(stop)  # nothing runs: only waiting messages are meant
    later = waiting(stops, said("after the stop"))[0]
    begun = [stops.begins(m) for m in (ann1, bob1, ann2, follow_up, later)]
    assert begun == [False, True, False, True, True]
    assert await stops.reply(stop, "") == stopped_reply(2)
    assert stopped_reply(2) != STOPPED


async def test_a_stop_counts_the_running_turn_and_the_waiting_ones() -> None:
    stops, turn = TurnStops(), Turn()
    long, queued = said("a long one"), said("and another")
    assert stops.begins(long)
    task = await started(stops, long, turn)
    stops.queued(queued)
    stop = said("/stop")
    stops.stop(stop)
    assert await task == (True, 0)
    assert not stops.begins(queued)
    assert await stops.reply(stop, "") == stopped_reply(2)


class Acted(Turn):
    """A turn whose tool acted before the stop: its handler stores a note of it and says so."""

    async def __call__(self) -> None:
        try:
            await super().__call__()
        except asyncio.CancelledError as exc:
            raise StoppedAfter(["- create_reminder: Created #1"]) from exc


async def test_a_turn_stopped_after_its_tools_acted_is_kept_and_they_are_named() -> None:
    stops, turn = TurnStops(), Acted()
    long, queued = said("a long one"), said("and another")
    task = await started(stops, long, turn)
    stops.queued(queued)
    stop = said("/stop")
    stops.stop(stop)
    assert await task == (False, 0)  # stopped, and not to be forgotten: its note stays
    assert not stops.begins(queued)
    said_back = await stops.reply(stop, "")
    assert said_back == stopped_reply(2, ["- create_reminder: Created #1"])
    assert said_back.startswith("Stopped. I set your last 2 messages aside: they get no answer")
    assert "already:\n- create_reminder: Created #1\nThat stays done" in said_back


async def test_a_chat_that_leaves_takes_its_waiting_messages_along() -> None:
    stops = TurnStops()
    (msg,) = waiting(stops, said("one"))
    stops.forsake(lambda key: key == KEY)
    stop = said("/stop")
    stops.stop(stop)  # on this replica, nothing of Ann's waits any more
    assert await stops.reply(stop, "") == NOTHING
    assert stops.begins(msg)
