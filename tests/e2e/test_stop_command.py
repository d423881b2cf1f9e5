"""/stop through the whole daemon (fake channel -> dispatcher -> runner -> real litellm ->
fake model whose answer is held): a person ends the turn answering them while it is in
the model, and sets aside their messages waiting behind it; the stopped messages get no
answer, now or after a restart, and their words do not reach the model again; nobody
else's /stop and no follow-up ends it, and what comes after the /stop is answered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.dispatcher.stops import NOTHING, STOPPED, stopped_reply
from bot.messages import MessageKind
from tests.fakes.channel import FakeChannel
from tests.fakes.web_client import metrics, value

REMIND = ("create_reminder", {"content": "call mom", "time": "in 2 hours"})


def carried(fake_llm: Any, text: str) -> bool:
    """Whether the last model request carried ``text`` anywhere in its messages."""
    return text in str(fake_llm.requests[-1].json["messages"])


async def test_stop_ends_the_turn_in_the_model_and_sets_its_message_aside(
    daemon_factory: Any, fake_llm: Any, tmp_path: Path
) -> None:
    daemon, chat = await daemon_factory()
    release = fake_llm.held_answer("the long essay")
    long = await chat.say("write me a long essay")
    await fake_llm.wait_requests(1)  # the turn is waiting on the model
    stop = await chat.say("/stop")
    assert (await chat.reply(stop)).text == STOPPED
    release.set()
    assert (await chat.ask("and now a haiku")).text == "echo: and now a haiku"
    assert not carried(fake_llm, "long essay")  # forgotten, as if never asked
    assert chat.replies_to(long) == []
    turns = {"channel": "test", "kind": "agent"}
    assert value(await metrics(daemon), "bot_turn_seconds_count", **turns, outcome="stopped") == 1
    await daemon.stop(timeout=2)
    again = FakeChannel()
    _, _ = await daemon_factory(data_dir=tmp_path / "data", channel=again)
    assert (await again.ask("still there?")).text == "echo: still there?"
    assert again.replies_to(long) == []  # finished: not run again after a restart
    assert len(fake_llm.requests) == 3


async def test_stop_sets_aside_its_persons_waiting_messages_and_the_chat_goes_on(
    daemon_factory: Any, fake_llm: Any
) -> None:
    _, chat = await daemon_factory()
    fake_llm.held_answer("never said")
    group = {"chat": "g1", "direct": False}
    long = await chat.say("a slow one", user="ann", **group)
    await fake_llm.wait_requests(1)
    queued = await chat.say("and a quick one", user="ann", **group)
    bobs = await chat.say("bob asks too", user="bob", **group)
    stop = await chat.say("/stop", user="ann", **group)
    after = await chat.say("a new question", user="ann", **group)
    assert (await chat.reply(bobs)).text == "echo: bob asks too"  # not Ann's to stop
    assert (await chat.reply(stop)).text == stopped_reply(2)
    assert (await chat.reply(after)).text == "echo: a new question"
    assert chat.replies_to(long) == chat.replies_to(queued) == []
    assert not carried(fake_llm, "quick one")  # never sent to the model, then or now
    assert len(fake_llm.requests) == 3


async def test_only_the_person_being_answered_can_stop_their_turn(
    daemon_factory: Any, fake_llm: Any
) -> None:
    _, chat = await daemon_factory()
    release = fake_llm.held_answer("done")
    group = {"chat": "g1", "direct": False}
    long = await chat.say("a slow one", user="ann", **group)
    await fake_llm.wait_requests(1)
    other = await chat.say("/stop", user="bob", **group)
    follow_up = await chat.say("/stop", user="ann", kind=MessageKind.SCHEDULED, **group)
    release.set()
    assert (await chat.reply(long)).text == "done"
    assert (await chat.reply(other)).text == NOTHING
    answer = (await chat.reply(follow_up)).text
    assert answer.startswith("echo: [Scheduled follow-up") and answer.endswith("/stop")  # a turn
    assert (await chat.ask("/stop", user="ann", **group)).text == NOTHING  # nothing runs now


async def test_a_stop_after_a_tool_acted_names_it_and_the_chat_keeps_a_note(
    daemon_factory: Any, fake_llm: Any
) -> None:
    """The reminder made, then /stop while the model writes the answer: the reminder
    stays, so the reply says so, and the chat keeps the message with a note of it (not
    the calls, and legal for a strict provider): asked about it next, the model knows."""
    daemon, chat = await daemon_factory()
    fake_llm.strict = fake_llm.alternating = True
    fake_llm.reply_tool_calls([REMIND])
    release = fake_llm.held_answer("never said")
    asked = await chat.say("remind me to call mom in 2 hours")
    await fake_llm.wait_requests(2)  # the reminder made, the turn back in the model
    said = (await chat.reply(await chat.say("/stop"))).text
    head = "Stopped: that message gets no answer, but before the stop I had already:\n"
    assert said.startswith(f"{head}- create_reminder: Created #1 "), said
    assert said.endswith("call mom\nThat stays done, and our chat keeps a note of it."), said
    release.set()
    assert (await chat.ask("did you set it?")).text == "echo: did you set it?"
    user, note = fake_llm.requests[-1].json["messages"][-3:-1]
    assert user["role"] == "user" and user["content"] == "remind me to call mom in 2 hours"
    assert note["role"] == "assistant" and "tool_calls" not in note
    assert note["content"].startswith(
        "[Stopped by the user before I answered. Already done, and it stays done: "
        "create_reminder: Created #1 "
    )
    assert fake_llm.rejected == [] and chat.replies_to(asked) == []
    assert [r.content for r in await daemon.reminders.list(chat.name, "u1")] == ["call mom"]
