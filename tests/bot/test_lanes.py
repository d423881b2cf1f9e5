"""Per-key lanes (bot/dispatcher/lanes.py) when a lane is cancelled: a chat whose lease
moved to another replica has its lanes cancelled by the replica's lease tick, which must
not lose its own cancellation meanwhile (its wait_for gives a stuck tick up)."""

from __future__ import annotations

import asyncio

from bot.dispatcher.lanes import KeyedSerial


async def test_cancelling_the_caller_of_cancel_is_not_swallowed() -> None:
    """cancel() waited on each lane inside suppress(CancelledError), which also ate a
    cancellation of its caller (a lease tick given up on by its wait_for)."""
    stuck = asyncio.Event()

    async def stubborn(item: str) -> None:
        while True:  # a lane that takes a while to end (say, a shielded write)
            try:
                await stuck.wait()
                return
            except asyncio.CancelledError:
                continue

    lanes: KeyedSerial[str, str] = KeyedSerial(stubborn, max_concurrent=4, idle_s=600)
    lanes.submit("chat", "m1")
    await asyncio.sleep(0)
    caller = asyncio.create_task(lanes.cancel(lambda key: True))
    await asyncio.sleep(0.05)
    caller.cancel()
    done, _ = await asyncio.wait([caller], timeout=5)
    assert done and caller.cancelled()
    stuck.set()  # let the lane go, so the test leaves no task behind
