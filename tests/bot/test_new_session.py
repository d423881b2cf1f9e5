"""``/new`` starts a fresh session for the chat: no model call, listed in /help."""

from __future__ import annotations

from bot.messages import ChatKey


async def test_new_forgets_this_chats_history_without_a_model_call(
    daemon_factory, fake_llm
) -> None:
    daemon, chat = await daemon_factory()
    assert (await chat.ask("my name is Ada")).text == "echo: my name is Ada"
    assert (await chat.ask("keep this", chat="other")).text == "echo: keep this"
    calls = len(fake_llm.requests)

    reply = await chat.ask("/new")
    assert reply.text.startswith("Started a fresh session; the ") and "forgotten" in reply.text
    assert len(fake_llm.requests) == calls  # a command: no model call
    assert await daemon.sessions.history(ChatKey("test", "c1")) == []
    assert await daemon.sessions.history(ChatKey("test", "other")) != []  # other chats keep theirs

    assert (await chat.ask("who am I?")).text == "echo: who am I?"
    sent = [m["content"] for m in fake_llm.requests[-1].json["messages"]]
    assert not any("Ada" in str(content) for content in sent)
    assert "nothing to forget" in (await chat.ask("/new", chat="empty")).text


async def test_help_lists_new(daemon_factory) -> None:
    _, chat = await daemon_factory()
    assert "/new — start a fresh session" in (await chat.ask("/help")).text


async def test_in_a_group_only_an_admin_may_wipe_the_history(daemon_factory, fake_llm) -> None:
    from tests.fakes.channel import FakeChannel

    daemon, chat = await daemon_factory(
        channel=FakeChannel("test", trusted=False),
        admins=["test:boss"],
        access={"dm_policy": "open"},
    )
    group = ChatKey("test", "g1")
    await chat.ask("the plan is Friday", chat="g1", user="ann", direct=False)
    refused = await chat.ask("/new", chat="g1", user="mallory", direct=False)
    assert refused.text.startswith("Only an admin can start a fresh session in a group")
    kept = await daemon.sessions.history(group)
    assert kept[0]["content"] == "the plan is Friday"  # everyone's history is kept
    # In their own one-to-one chat anyone may start afresh.
    await chat.ask("private note", chat="dm-mallory", user="mallory")
    own = await chat.ask("/new", chat="dm-mallory", user="mallory")
    assert own.text.startswith("Started a fresh session; the ")
    assert (await chat.ask("/new", chat="g1", user="boss", direct=False)).text.startswith(
        f"Started a fresh session; the {len(kept)} earlier"
    )
    assert await daemon.sessions.history(group) == []


async def test_new_removes_the_files_the_bot_wrote_in_this_chat_only(
    daemon_factory, fake_llm
) -> None:
    """What send_file wrote for a chat (chat_files/<channel>-<chat id>/) stayed after /new
    for good; it goes with the history now, in the chat's workspace only."""
    daemon, chat = await daemon_factory(workspaces={"routes": {"*": "default", "test:t1": "team"}})
    for name in ("c1", "other", "t1"):
        fake_llm.reply_tool_calls([("send_file", {"content": "# report", "name": "report.md"})])
        fake_llm.reply_tool_calls([("final_result", {"answer": "here it is"})])
        assert (await chat.ask("the report", chat=name)).text.startswith("here it is")
    root = daemon.workspaces.root
    folders = {
        name: root / ws / "chat_files" / f"test-{name}"
        for name, ws in (("c1", "default"), ("other", "default"), ("t1", "team"))
    }
    assert all((folder / "report.md").is_file() for folder in folders.values())
    before_team = root / "default" / "chat_files" / "test-t1"  # t1 before it moved to team
    before_team.mkdir(parents=True)
    (before_team / "old.md").write_text("kept")

    assert (await chat.ask("/new")).text.startswith("Started a fresh session")
    assert not folders["c1"].exists()
    assert (folders["other"] / "report.md").is_file()
    assert (await chat.ask("/new", chat="t1")).text.startswith("Started a fresh session")
    assert not folders["t1"].exists()
    assert (before_team / "old.md").is_file()  # the default workspace's history is apart


async def test_new_in_one_thread_keeps_the_files_its_chats_other_threads_share(
    daemon_factory, fake_llm
) -> None:
    """A chat's threads share one folder: /new in one thread removed the files the bot
    wrote in every other, whose histories still name them ("send that report again")."""
    daemon, chat = await daemon_factory(workspaces={"routes": {"*": "team"}})
    for thread in ("a", "b"):
        fake_llm.reply_tool_calls([("send_file", {"content": f"# {thread}", "name": "r.md"})])
        fake_llm.reply_tool_calls([("final_result", {"answer": "here it is"})])
        assert (await chat.ask("the report", thread=thread)).text.startswith("here it is")
    folder = daemon.workspaces.root / "team" / "chat_files" / "test-c1"
    assert sorted(p.name for p in folder.iterdir()) == ["r-2.md", "r.md"]
    assert (await chat.ask("/new", thread="a")).text.startswith("Started a fresh session")
    assert sorted(p.name for p in folder.iterdir()) == ["r-2.md", "r.md"]
    assert (await chat.ask("/new")).text.startswith("Started a fresh session")
    assert not folder.exists()  # the chat's own /new, outside its threads
