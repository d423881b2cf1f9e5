"""Arrival order per conversation (channels/discord/order.py): a message waits only for
the earlier messages of its own conversation, so chats journal side by side (their
inbox writes share a commit) and each chat keeps its order."""

from __future__ import annotations

import asyncio

import pytest

from channels.discord.order import PerConversation


async def test_one_conversation_in_order_others_side_by_side() -> None:
    order = PerConversation()
    gate = asyncio.Event()
    done: list[str] = []

    async def handle(conversation: int, name: str, wait: bool = False) -> None:
        async with order.turn(conversation):
            if wait:
                await gate.wait()  # a slow journal write
            done.append(name)

    tasks = [
        asyncio.create_task(handle(1, "a1", wait=True)),
        asyncio.create_task(handle(1, "a2")),
        asyncio.create_task(handle(2, "b1")),
    ]
    await asyncio.sleep(0)  # every task has started and asked for its turn
    await asyncio.wait_for(_until(lambda: done == ["b1"]), 5)  # not held up by chat 1
    assert len(order) == 1  # chat 1, whose two messages are in hand; chat 2 is done
    gate.set()
    await asyncio.gather(*tasks)
    assert done == ["b1", "a1", "a2"]
    assert len(order) == 0  # nothing kept once no message is in hand


async def test_a_failed_message_frees_its_conversation() -> None:
    order = PerConversation()

    async def fail() -> None:
        async with order.turn(7):
            raise RuntimeError("journal down")

    for _ in range(2):
        with pytest.raises(RuntimeError):
            await fail()
    assert len(order) == 0


async def _until(condition) -> None:  # type: ignore[no-untyped-def]
    while not condition():  # noqa: ASYNC110 (plain state of a test: no event to await)
        await asyncio.sleep(0)
