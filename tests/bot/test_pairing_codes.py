"""Pairing codes on a controlled clock: issued, repeated while pending, expired, capped."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import pytest_asyncio

from bot.dispatcher.pairing import ALPHABET, Pairing, describe_request, normalize_code
from bot.errors import ToolError
from bot.messages import ChatKey, InboundMessage
from bot.store.sqlite import sqlite_storage

T0 = datetime(2030, 5, 1, 12, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


@pytest_asyncio.fixture
async def clocked(tmp_path: Path) -> AsyncIterator[tuple[Pairing, Clock]]:
    storage = sqlite_storage(tmp_path / "bot.db")
    await storage.backend.open()
    clock = Clock()
    yield Pairing(storage.access, clock=clock), clock
    await storage.backend.close()


def dm(user: str, channel: str = "telegram") -> InboundMessage:
    return InboundMessage(ChatKey(channel, f"dm-{user}"), user, "hi", user_name=f"@{user}")


async def test_code_shape_and_repeat_until_expiry(clocked: tuple[Pairing, Clock]) -> None:
    pairing, clock = clocked
    first = await pairing.issue(dm("7"))
    assert first.new and first.request is not None
    code = first.request.code
    assert len(code) == 8 and set(code) <= set(ALPHABET)
    assert not set(ALPHABET) & set("0O1IL")
    clock.now = T0 + timedelta(minutes=59, seconds=59)
    again = await pairing.issue(dm("7"))
    assert again.request == first.request and not again.new
    assert describe_request(first.request, clock.now).endswith("expires in 0 min")
    clock.now = T0 + timedelta(hours=1)  # expired: approving it fails, a new one is issued
    with pytest.raises(ToolError, match=f"no pending pairing code {code}"):
        await pairing.approve(code, by="cli")
    fresh = await pairing.issue(dm("7"))
    assert fresh.new and fresh.request is not None and fresh.request.code != code


async def test_three_squatters_cannot_lock_a_newcomer_out(clocked: tuple[Pairing, Clock]) -> None:
    """The cap is per channel; a full channel pushes its oldest code out for the
    newcomer, and the pushed-out account cannot push back in while that code would live."""
    store = clocked[0].store
    pairing, clock = Pairing(store, max_pending=3, clock=clocked[1]), clocked[1]
    squatters = []
    for n in range(3):
        clock.now = T0 + timedelta(minutes=n)
        squatters.append((await pairing.issue(dm(f"s{n}"))).request)
    clock.now = T0 + timedelta(minutes=10)
    newcomer = await pairing.issue(dm("new"))
    assert newcomer.new and newcomer.request is not None
    assert (await pairing.issue(dm("x", channel="slack"))).request is not None
    pending = await pairing.pending()
    assert squatters[0] not in pending and newcomer.request in pending and len(pending) == 4
    again = await pairing.issue(dm("s0"))
    assert again.request is None and again.hold is not None
    assert again.hold.until == T0 + timedelta(hours=1)  # its pushed-out code's end
    assert (await pairing.issue(dm("s1"))).request == squatters[1]  # the others repeat
    clock.now = T0 + timedelta(hours=1, minutes=20)  # all of them expired: room again
    assert (await pairing.issue(dm("s0"))).new


async def test_a_denied_account_gets_no_new_code_for_a_day(clocked: tuple[Pairing, Clock]) -> None:
    pairing, clock = clocked
    issued = (await pairing.issue(dm("7"))).request
    assert issued is not None
    await pairing.deny(issued.code, by="cli")
    for later in (timedelta(seconds=1), timedelta(hours=1, seconds=1), timedelta(hours=23)):
        clock.now = T0 + later
        again = await pairing.issue(dm("7"))
        assert again.request is None and again.hold is not None
        assert again.hold.reason == "denied" and again.hold.until == T0 + timedelta(hours=24)
    clock.now = T0 + timedelta(hours=24)
    assert (await pairing.issue(dm("7"))).new
    # Never held for less than a code lives, whatever denied_for says.
    assert Pairing(
        pairing.store, ttl=timedelta(hours=2), denied_for=timedelta(minutes=5)
    ).denied_for == timedelta(hours=2)


async def test_approve_deny_revoke(clocked: tuple[Pairing, Clock]) -> None:
    pairing, _ = clocked
    issued = (await pairing.issue(dm("7"))).request
    assert issued is not None
    spaced = f" {issued.code[:4].lower()}-{issued.code[4:]} "  # as a person may type it
    approved = await pairing.approve(spaced, by="telegram:1")
    assert approved.sender == "telegram:7"
    assert await pairing.store.is_approved("telegram", "7")
    assert await pairing.pending() == []
    [user] = await pairing.approved()
    assert user.approved_by == "telegram:1"
    assert await pairing.revoke(" telegram:7 ") == "telegram:7"
    with pytest.raises(ToolError, match="not an approved user"):
        await pairing.revoke("telegram:7")
    with pytest.raises(ToolError, match="usage"):
        await pairing.revoke("telegram7")
    other = (await pairing.issue(dm("8"))).request
    assert other is not None
    assert (await pairing.deny(other.code, by="cli")).user_id == "8"
    assert not await pairing.store.is_approved("telegram", "8")
    with pytest.raises(ToolError, match="usage"):
        await pairing.approve("  ", by="cli")


def test_normalize_code() -> None:
    assert normalize_code(" abcd-2345 ") == "ABCD2345"
    assert normalize_code("/x") == "X"
