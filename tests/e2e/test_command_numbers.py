"""Numbers typed to chat commands that no row can have: more digits than a row id holds
(SQLite's INTEGER overflowed) and "²", which ``str.isdigit`` takes but ``int`` refuses.
Each is the usage or "there is no ...", as a missing id is, never the generic apology;
the other ids of one /cancel are still cancelled and said."""

from __future__ import annotations

import pytest

HUGE = "99999999999999999999"  # past 2**63 - 1


async def test_a_huge_id_beside_a_real_one_still_cancels_the_real_one(daemon_factory, fake_llm):
    _, chat = await daemon_factory()
    await chat.ask("/remind in 1 hour | tea")
    said = (await chat.ask(f"/cancel 1 {HUGE}")).text.splitlines()
    assert said[0].startswith("Cancelled #1 ")
    assert said[1:] == [f"Error: there is no active reminder #{HUGE} of yours"]
    assert "no active reminders" in (await chat.ask("/reminders")).text


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (f"/cancel {HUGE}", f"Error: there is no active reminder #{HUGE} of yours"),
        ("/cancel ²", "Error: usage: /cancel"),
        ("/forget ²", "usage: /forget"),
        (f"/forget {HUGE}", f"There is no fact {HUGE}; /memory shows each fact with its number."),
        (f"/soul diff {HUGE}", f"Error: SOUL.md of workspace default has no version {HUGE}"),
        (f"/soul rollback #{HUGE}", f"Error: SOUL.md of workspace default has no version {HUGE}"),
        ("/soul rollback ³", "Error: usage: /soul rollback <n>"),
    ],
)
async def test_a_number_no_row_has_is_the_usage_or_not_found(
    daemon_factory, fake_llm, command: str, expected: str
):
    _, chat = await daemon_factory()
    assert (await chat.ask(command)).text.startswith(expected)
    assert fake_llm.requests == []
