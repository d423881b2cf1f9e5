"""Skills through the daemon: what the fake LLM server receives as the system prompt and
as read_skill results, before and after an admin disables a skill from the chat."""

from __future__ import annotations


async def test_a_disabled_skill_is_not_offered_whatever_the_history_says(daemon_factory, fake_llm):
    daemon, chat = await daemon_factory()
    fake_llm.reply_tool_calls([("read_skill", {"name": "reminders"})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "read it"})])
    await chat.ask("how do reminders work?")
    first = fake_llm.requests[-1].json["messages"]
    assert "- reminders: Choosing between a reminder" in first[0]["content"]
    assert first[-1]["content"].startswith("[tool output: read_skill]\n# Reminders and follow-ups")

    assert (await chat.ask("/skills disable reminders")).text == "Skill reminders is now disabled."
    fake_llm.reply_tool_calls([("read_skill", {"name": "reminders"})])  # as it did before
    fake_llm.reply_tool_calls([("final_result", {"answer": "ok"})])
    await chat.ask("and again?")
    second = fake_llm.requests[-1].json["messages"]
    assert "- reminders:" not in second[0]["content"]
    assert "# Reminders and follow-ups" in str(second[1:-2])  # the old turn is still there
    assert second[-1]["content"].startswith(
        "[tool output: read_skill]\nError: skill 'reminders' is disabled in this workspace"
    )
    assert (daemon.workspaces.path() / "skills" / "disabled.txt").read_text() == "reminders\n"


async def test_skills_command_answers_read_like_every_command(daemon_factory, fake_llm):
    """A refusal reads "Error: ..." as every other command's does (it came bare), and
    disabling a disabled skill says so (it said "is now disabled" again)."""
    _, chat = await daemon_factory()
    assert (await chat.ask("/skills disable nope")).text == (
        "Error: no skill named 'nope' in workspace 'default'; /skills lists them"
    )
    assert (await chat.ask("/skills enable")).text == (
        "Error: usage: /skills [enable|disable <name>]"
    )
    assert (await chat.ask("/skills disable reminders")).text == "Skill reminders is now disabled."
    assert (await chat.ask("/skills disable reminders")).text == (
        "Skill reminders is already disabled; nothing changed."
    )
    assert (await chat.ask("/skills enable reminders")).text == "Skill reminders is now enabled."
    assert fake_llm.requests == []
