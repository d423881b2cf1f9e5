"""Follow-ups cannot multiply paid turns: a follow-up set during a follow-up keeps the
minimum interval, chains of them stop at a fixed depth, and follow-up turns spend
their owner's rate-limit tokens. Fired through the real scheduler into the real
dispatcher; the fake model re-arms the follow-up at every chance it gets."""

from __future__ import annotations

import json
from typing import Any

from bot.messages import ChatKey, InboundMessage, MessageKind, inbound_from_json, to_json
from bot.reminders.service import MAX_FOLLOWUP_CHAIN
from bot.store.reminders import ReminderKind, ReminderStore
from tests.fakes.channel import FakeChannel
from tests.fakes.llm_server import default_responder, tool_calls_reply

FOLLOWUP_LABEL = "[Scheduled follow-up: a prompt you (the assistant) wrote earlier"
REARM = ("schedule_followup", {"prompt": "check the oven again", "time": "in 1 second"})


def rearming(fake_llm: Any) -> None:
    """Every turn (a person's or a follow-up's) schedules a follow-up in one second, then
    answers with what the tool said."""

    def respond(payload: Any) -> Any:
        last = payload["messages"][-1]
        if last["role"] == "tool":
            return tool_calls_reply([("final_result", {"answer": last["content"]})])
        if last["role"] == "user":
            return tool_calls_reply([REARM])
        return default_responder(payload)

    fake_llm.default = respond


async def _followups(daemon: Any) -> list[Any]:
    rows = await daemon.db.fetchall("SELECT id FROM reminders ORDER BY id")
    store = ReminderStore(daemon.db)
    found = [await store.get(int(r["id"])) for r in rows]
    return [r for r in found if r is not None and r.kind is ReminderKind.FOLLOWUP]


async def test_a_followup_cannot_rearm_itself_a_second_later(daemon_factory, fake_llm) -> None:
    daemon, chat = await daemon_factory()
    rearming(fake_llm)
    first = await chat.ask("check the oven in a second", chat="k")
    assert "Created #1 follow-up" in first.text
    refused = await chat.wait_for(
        lambda sent: any("at least 15 minutes away" in m.text for m in sent), timeout=15
    )
    assert refused
    assert [r.chain_depth for r in await _followups(daemon)] == [1]
    assert len(fake_llm.requests) == 4  # two for the message, two for its one follow-up


async def test_chains_of_followups_stop_at_the_depth_limit(daemon_factory, fake_llm) -> None:
    daemon, chat = await daemon_factory(reminders={"min_followup_interval_min": 0})
    rearming(fake_llm)
    await chat.ask("check the oven in a second", chat="k")
    await chat.wait_for(
        lambda sent: any(f"at most {MAX_FOLLOWUP_CHAIN} deep" in m.text for m in sent),
        timeout=20,
    )
    chain = await _followups(daemon)
    assert [r.chain_depth for r in chain] == list(range(1, MAX_FOLLOWUP_CHAIN + 1))
    turns = [
        r
        for r in fake_llm.requests
        if r.json["messages"][-1]["role"] == "user"
        and r.json["messages"][-1]["content"].startswith(FOLLOWUP_LABEL)
    ]
    assert len(turns) == MAX_FOLLOWUP_CHAIN  # one turn per follow-up, then it stops


async def test_followup_turns_spend_their_owners_rate_limit(daemon_factory, fake_llm) -> None:
    _, chat = await daemon_factory(
        channel=FakeChannel("test", trusted=False),
        access={"dm_policy": "open"},
        limits={"user_burst": 2, "user_refill_s": 3600},
    )
    two = [("schedule_followup", {"prompt": f"poll {n}", "time": "in 1 second"}) for n in (1, 2)]
    fake_llm.reply_tool_calls(two)
    fake_llm.reply_tool_calls([("final_result", {"answer": "both set"})])
    assert (await chat.ask("poll twice")).text == "both set"  # the first token
    sent = await chat.wait_for(
        lambda sent: (
            any(m.text.startswith("A scheduled follow-up was skipped") for m in sent)
            and any(m.text.startswith("echo: ") for m in sent)
        ),
        timeout=15,
    )
    assert len([m for m in sent if m.text.startswith("echo: ")]) == 1  # the second token
    assert len(fake_llm.requests) == 3


def test_the_chain_depth_travels_in_the_inbox_journal() -> None:
    msg = InboundMessage(ChatKey("t", "c"), "u", "x", kind=MessageKind.SCHEDULED, chain_depth=2)
    assert inbound_from_json(to_json(msg)).chain_depth == 2
    old = json.loads(to_json(msg))
    del old["chain_depth"]  # journaled before the field existed: a person's message
    assert inbound_from_json(json.dumps(old)).chain_depth == 0
