"""A group is shared: one member filled it with a hundred per-minute repeats (a hundred
posts a minute), the group's admin could neither see nor end them from the chat ("there
is no active reminder #1 of yours", though each said "/cancel 1 ends it"), and only the
operator's shell could. A group now has its own cap, a minimum between a repeat's runs,
and its workspace's admins list and cancel any reminder set in it."""

from __future__ import annotations

import re
from typing import Any

from tests.fakes.channel import FakeChannel

GROUP = {"chat": "g1", "direct": False}


async def _group_daemon(daemon_factory: Any, **kw: Any) -> FakeChannel:
    channel = FakeChannel("telegram", trusted=False)
    _, chat = await daemon_factory(
        channel=channel,
        channels={"telegram": {"allow_from": ["u2", "u3"]}},
        admins=["telegram:boss"],
        **kw,
    )
    return chat


def _id(ack: str) -> str:
    found = re.match(r"OK, #(\d+) ", ack)
    assert found, ack
    return found.group(1)


async def test_a_repeat_in_a_group_keeps_the_group_minimum(daemon_factory: Any) -> None:
    chat = await _group_daemon(daemon_factory)
    refused = (await chat.ask("/remind every 1 minutes | SPAM", user="u2", **GROUP)).text
    assert "at most once every 15 minutes" in refused and not refused.startswith("OK")
    cron = (await chat.ask("/remind every * * * * * | SPAM", user="u2", **GROUP)).text
    assert "at most once every 15 minutes" in cron
    ok = (await chat.ask("/remind every 15 minutes | stretch", user="u2", **GROUP)).text
    assert ok.startswith("OK, #")
    private = (await chat.ask("/remind every 1 minutes | drink", user="u2", chat="dm-u2")).text
    assert private.startswith("OK, #")  # a direct chat keeps any repeat


async def test_the_model_cannot_set_a_per_minute_repeat_in_a_group(
    daemon_factory: Any, fake_llm: Any
) -> None:
    """A page the model read steered it into per-minute reminders in one turn."""
    chat = await _group_daemon(daemon_factory)
    spam = {"content": "SPAM", "time": "in 1 minute", "recurrence": "* * * * *"}
    fake_llm.reply_tool_calls([("create_reminder", spam)])
    fake_llm.reply_tool_calls([("final_result", {"answer": "done"})])
    await chat.ask("summarize the page", user="u2", **GROUP)
    result = fake_llm.requests[1].json["messages"][-1]["content"]
    assert "Error:" in result and "at most once every 15 minutes" in result
    listed = (await chat.ask("/reminders", user="u2", **GROUP)).text
    assert listed == "You have no active reminders in this chat."


async def test_a_groups_admin_lists_and_cancels_any_reminder_set_there(
    daemon_factory: Any,
) -> None:
    chat = await _group_daemon(daemon_factory)
    spam = _id((await chat.ask("/remind every 15 minutes | SPAM", user="u2", **GROUP)).text)
    own = _id((await chat.ask("/remind in 1 hour | agenda", user="boss", **GROUP)).text)
    await chat.ask("/remind in 1 hour | private", user="u2", chat="dm-u2")
    listed = (await chat.ask("/reminders", user="boss", **GROUP)).text
    assert f"#{spam} reminder" in listed and "SPAM (set by u2)" in listed
    assert f"#{own} reminder" in listed and "agenda (set by" not in listed
    assert "private" not in listed  # set elsewhere: not this chat's
    # Another member may not end it; the admin may, here only.
    other = (await chat.ask(f"/cancel {spam}", user="u3", **GROUP)).text
    assert f"no active reminder #{spam}" in other
    elsewhere = (await chat.ask(f"/cancel {spam}", user="boss", chat="g2", direct=False)).text
    assert f"no active reminder #{spam}" in elsewhere
    ended = (await chat.ask(f"/cancel {spam}", user="boss", **GROUP)).text
    assert ended.startswith(f"Cancelled #{spam} reminder") and "SPAM" in ended
    mine = (await chat.ask("/reminders", user="u2", **GROUP)).text
    assert mine == "You have no active reminders in this chat."


async def test_a_chat_holds_a_capped_number_of_reminders(daemon_factory: Any) -> None:
    chat = await _group_daemon(daemon_factory, reminders={"max_active_per_chat": 3})
    for n, user in enumerate(("u2", "u2", "u3")):
        assert (await chat.ask(f"/remind in 1 hour | r{n}", user=user, **GROUP)).text.startswith(
            "OK"
        )
    full = (await chat.ask("/remind in 1 hour | one more", user="u3", **GROUP)).text
    assert "this chat already has 3 active reminders" in full
    private = (await chat.ask("/remind in 1 hour | mine", user="u3", chat="dm-u3")).text
    assert private.startswith("OK")  # the user's own cap is far off; another chat is free
