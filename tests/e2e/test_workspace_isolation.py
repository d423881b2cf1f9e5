"""Workspaces through the whole daemon (in-process channel, real litellm, fake LLM):
two workspaces never see each other's persona, history, reminders or tool results."""

from __future__ import annotations

from bot.agent.governor.offload import RESULTS_DIR
from bot.messages import ChatKey
from bot.store.reminders import ReminderStore
from bot.workspaces.routing import session_key
from tests.e2e.test_self_healing import BIG, BigOutput

ROUTES = {"workspaces": {"routes": {"*": "default", "test:a": "alpha", "test:b": "beta"}}}


def _system(fake_llm) -> str:
    return str(fake_llm.requests[-1].json["messages"][0]["content"])


def _sent_text(fake_llm) -> str:
    return "\n".join(str(m.get("content")) for m in fake_llm.requests[-1].json["messages"])


async def test_two_workspaces_never_see_each_others_persona_history_or_reminders(
    daemon_factory, fake_llm
):
    daemon, chat = await daemon_factory(**ROUTES)
    assert "version 2" in (await chat.ask("/soul set You are Alpha-bot.", chat="a")).text
    assert "version 2" in (await chat.ask("/soul set You are Beta-bot.", chat="b")).text

    await chat.ask("my code word is swordfish", chat="a")
    assert "You are Alpha-bot." in _system(fake_llm)
    assert "Beta-bot" not in _system(fake_llm)
    assert f"Workspace: {daemon.workspaces.path('alpha').resolve()}" in _system(fake_llm)

    await chat.ask("hello", chat="b")
    assert "You are Beta-bot." in _system(fake_llm)
    assert "Alpha-bot" not in _sent_text(fake_llm) and "swordfish" not in _sent_text(fake_llm)

    assert (await chat.ask("/remind in 1 hour water alpha's plants", chat="a")).text.startswith(
        "OK"
    )
    assert (await chat.ask("/reminders", chat="b")).text == "You have no active reminders."
    assert "water alpha's plants" in (await chat.ask("/reminders", chat="a")).text
    (reminder,) = await ReminderStore(daemon.db).active()
    assert reminder.workspace == "alpha"
    refused = await chat.ask(f"/cancel {reminder.id}", chat="b")
    assert refused.text == f"Error: there is no active reminder #{reminder.id} of yours"

    assert (daemon.workspaces.path("alpha") / "SOUL.md").read_text() == "You are Alpha-bot."
    assert (daemon.workspaces.path("default") / "SOUL.md").read_text() != "You are Alpha-bot."


async def test_workspace_use_switches_a_chat_and_its_history(daemon_factory, fake_llm):
    daemon, chat = await daemon_factory()
    await chat.ask("/soul set Default soul.", chat="c")
    await chat.ask("remember pineapple", chat="c")
    assert (await chat.ask("/workspace", chat="c")).text.startswith(
        "This chat uses workspace default."
    )
    typo = await chat.ask("/workspace use beta", chat="c")  # not made by a typo
    assert typo.text.startswith("Error: there is no workspace 'beta' (workspaces: default)")
    assert not daemon.workspaces.path("beta").exists()
    assert (await chat.ask("/workspace new beta", chat="c")).text == (
        "This chat now uses a new workspace beta."
    )
    again = await chat.ask("/workspace new beta", chat="c")
    assert again.text == "Error: workspace beta exists already: /workspace use beta"
    # names are lower-case: "Beta" is beta (it was "invalid workspace name 'Beta'")
    again = await chat.ask("/workspace new Beta", chat="c")
    assert again.text == "Error: workspace beta exists already: /workspace use beta"
    await chat.ask("hi there", chat="c")
    assert "Default soul." not in _system(fake_llm)
    assert "pineapple" not in _sent_text(fake_llm)  # beta has its own history of this chat
    assert (daemon.workspaces.path("beta") / "SOUL.md").exists()  # created from templates

    await chat.ask("/workspace use default", chat="c")
    await chat.ask("and now?", chat="c")
    assert "Default soul." in _system(fake_llm) and "pineapple" in _sent_text(fake_llm)
    assert "hi there" not in _sent_text(fake_llm)

    for bad in ("../../etc/passwd", "SOUL.md/../x", "Be ta"):
        reply = await chat.ask(f"/workspace use {bad}", chat="c")
        assert reply.text.startswith("Error: invalid workspace name"), reply.text
    assert (await chat.ask("/workspace", chat="c")).text.startswith(
        "This chat uses workspace default."
    )


async def test_followup_fires_in_the_workspace_it_was_set_in(daemon_factory, fake_llm):
    daemon, chat = await daemon_factory(**ROUTES)
    await chat.ask("/soul set Alpha soul.", chat="a")
    fake_llm.reply_tool_calls(
        [("schedule_followup", {"prompt": "check the garden", "time": "in 1 hour"})]
    )
    fake_llm.reply_tool_calls([("final_result", {"answer": "scheduled"})])
    assert (await chat.ask("follow up later", chat="a")).text == "scheduled"
    await chat.ask("/workspace use beta", chat="a")  # the chat moves on; the follow-up not

    (followup,) = await ReminderStore(daemon.db).active()
    assert followup.workspace == "alpha"
    fake_llm.reply_tool_calls([("final_result", {"answer": "garden checked"})])
    assert followup.next_fire_at is not None
    await daemon.scheduler.fire(followup.id, followup.next_fire_at)
    await chat.wait_for(lambda sent: any(m.text == "garden checked" for m in sent))
    assert "Alpha soul." in _system(fake_llm)
    assert "follow up later" in _sent_text(fake_llm)  # alpha's history of the chat
    answer = next(m for m in chat.sent if m.text == "garden checked")
    assert answer.key == ChatKey("test", "a")
    stored = await daemon.sessions.history(session_key(ChatKey("test", "a"), "alpha"))
    assert any("check the garden" in str(m["content"]) for m in stored)


async def test_offloaded_tool_results_stay_in_their_workspace(daemon_factory, fake_llm):
    daemon, chat = await daemon_factory(context={"max_tool_result_chars": 4_000}, **ROUTES)
    daemon.tools.register(BigOutput(), builtin=False)
    fake_llm.reply_tool_calls([("big_output", {})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "read it"})])
    assert (await chat.ask("read the big thing", chat="a")).text == "read it"
    (saved,) = (daemon.workspaces.path("alpha") / RESULTS_DIR).glob("*.txt")
    assert saved.read_text(encoding="utf-8") == BIG
    assert not (daemon.workspaces.path("default") / RESULTS_DIR).exists()
    assert not (daemon.workspaces.path("beta") / RESULTS_DIR).exists()
