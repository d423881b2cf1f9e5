"""Whole turns through the daemon: fake Discord gateway + REST -> real discord.py -> the
DiscordChannel its spec builds from config -> daemon -> real litellm -> fake LLM ->
replies posted back through discord.py."""

from __future__ import annotations

import itertools
import json
import sqlite3
import time
from typing import Any

import pytest
import pytest_asyncio

from bot.daemon import Daemon
from tests.fakes import daemons, discord_api
from tests.fakes.daemons import asked, channel_state_keys
from tests.fakes.discord_api import EDIT, POST, FakeDiscord
from tests.fakes.llm_server import streamed_answer
from tests.fakes.waiting import until
from tests.fakes.web_client import channel_state, metrics, value

fake_discord = discord_api.fake_discord
platform_daemon = daemons.platform_daemon
TUNING = {"discord": {"identify_delay_s": 0.01, "guild_ready_timeout": 0.05}}
NO_PINGS = {"parse": []}  # no @everyone/@here, no roles, no users, no replied user
IDENTIFY, RESUME = 2, 6
REMINDER = "⏰ Reminder"


@pytest_asyncio.fixture
async def discord_daemon(fake_discord: FakeDiscord, platform_daemon: daemons.PlatformDaemons):
    """Start a daemon whose only platform is Discord, connected to the fake.

    The fake is a dependency first, so it is torn down after the daemons.
    """

    async def start(streaming_keys: dict[str, Any] | None = None, **section: Any) -> Daemon:
        values = {
            "token": fake_discord.token,
            "api_base": fake_discord.api_base,
            "allow_from": ["*"],
            **section,
        }
        keys = {"streaming": streaming_keys} if streaming_keys else {}
        daemon = await platform_daemon({"discord": values}, extras=TUNING, **keys)
        return await _up(daemon, fake_discord)

    return start


async def _up(daemon: Daemon, fake: FakeDiscord) -> Daemon:
    await fake.wait_session()
    await until(lambda: daemon.channels["discord"].connected)
    return daemon


def _with_text(fake: FakeDiscord, text: str, channel_id: int | None = None) -> list[Any]:
    return [p for p in fake.posts(channel_id=channel_id) if text in p.json.get("content", "")]


async def _answers(fake: FakeDiscord, text: str, n: int = 1, channel_id: int | None = None):
    await fake.wait_until(lambda: len(_with_text(fake, text, channel_id)) >= n)
    return _with_text(fake, text, channel_id)


async def _barrier(fake: FakeDiscord, text: str = "barrier") -> None:
    """One more DM answered: every message dispatched before it has been handled."""
    fake.user_message(text)
    await _answers(fake, f"echo: {text}")


def _guild(fake: FakeDiscord) -> tuple[int, int]:
    gid = fake.add_guild()
    return gid, fake.channel_of(gid)


def _mention(fake: FakeDiscord, text: str, gid: int, cid: int) -> dict[str, Any]:
    return fake.user_message(
        f"<@{fake.bot_id}> {text}", guild_id=gid, channel_id=cid, mentions=(fake.mention_of_bot(),)
    )


async def test_dm_turn_end_to_end(discord_daemon, fake_discord: FakeDiscord, fake_llm) -> None:
    await discord_daemon()
    dm = fake_discord.user_message("hello there")
    [post] = await _answers(fake_discord, "echo: hello there", channel_id=4242)
    assert post.json["content"] == "echo: hello there"
    assert int(post.json["message_reference"]["message_id"]) == int(dm["id"])
    assert post.json["allowed_mentions"] == NO_PINGS
    assert fake_discord.calls_to("POST /channels/{channel_id}/typing")
    block = fake_llm.requests[-1].json["messages"][-1]["content"]
    assert "Channel: discord" in block and "User: 7 (@alice)" in block


async def test_guild_mention_is_answered_as_a_reply_that_pings_no_one(
    discord_daemon, fake_discord, fake_llm
):
    gid, cid = _guild(fake_discord)
    await discord_daemon()
    fake_discord.user_message("just chatting", guild_id=gid, channel_id=cid)
    fake_discord.user_message(
        "@everyone meeting now", guild_id=gid, channel_id=cid, mention_everyone=True
    )
    fake_llm.reply_tool_calls(
        [("final_result", {"answer": "@everyone @here <@&77> <@8> all of you"})]
    )
    ask = _mention(fake_discord, "what's new?", gid, cid)
    [post] = await _answers(fake_discord, "all of you", channel_id=cid)
    assert int(post.json["message_reference"]["message_id"]) == int(ask["id"])
    assert post.json["allowed_mentions"] == NO_PINGS  # the model's @everyone pings no one
    await _barrier(fake_discord)
    assert asked(fake_llm) == ["what's new?", "barrier"]  # chatter and @everyone: no turn


async def test_a_thread_conversation_needs_one_mention_also_after_a_restart(
    discord_daemon, platform_daemon, fake_discord, fake_llm
):
    gid, cid = _guild(fake_discord)
    tid = fake_discord.add_thread(gid, cid, bot_member=False)
    daemon = await discord_daemon()
    fake_discord.user_message("not for the bot", guild_id=gid, channel_id=tid)
    _mention(fake_discord, "remember 42", gid, tid)
    [first] = await _answers(fake_discord, "echo: remember 42", channel_id=tid)
    assert int(first.json["message_reference"]["channel_id"]) == tid
    fake_discord.user_message("which number?", guild_id=gid, channel_id=tid)
    await _answers(fake_discord, "echo: which number?", channel_id=tid)
    earlier = str(fake_llm.requests[-1].json["messages"][:-1])  # one session per thread
    assert "echo: remember 42" in earlier
    daemon = await _up(await platform_daemon.restart(daemon), fake_discord)
    assert f"discord:thread:{tid}" in await channel_state_keys(daemon)
    fake_discord.user_message("still with me?", guild_id=gid, channel_id=tid)
    await _answers(fake_discord, "echo: still with me?", channel_id=tid)
    assert "not for the bot" not in asked(fake_llm)


async def test_allow_from_refuses_others_without_a_model_call(
    discord_daemon, fake_discord, fake_llm
):
    await discord_daemon(allow_from=["8"])
    fake_discord.user_message("let me in")  # from user 7
    [notice] = await fake_discord.wait_posts(1, channel_id=4242)
    assert "only answers approved users" in notice.json["content"]
    assert fake_llm.requests == []
    fake_discord.user_message("hi from bob", channel_id=4343, author=discord_api.user(8, "bob"))
    await _answers(fake_discord, "echo: hi from bob", channel_id=4343)
    assert asked(fake_llm) == ["hi from bob"]


async def test_the_cannot_read_notice_is_sent_once_also_across_a_restart(
    discord_daemon, platform_daemon, fake_discord, fake_llm
):
    gid, cid = _guild(fake_discord)
    daemon = await discord_daemon(group_policy="all")
    fake_discord.user_message("", guild_id=gid, channel_id=cid)  # no Message Content intent
    [notice] = await fake_discord.wait_posts(1, channel_id=cid)
    assert "Message Content" in notice.json["content"]
    daemon = await _up(await platform_daemon.restart(daemon), fake_discord)
    fake_discord.user_message("", guild_id=gid, channel_id=cid)
    await _barrier(fake_discord)
    assert len(fake_discord.posts(channel_id=cid)) == 1  # told once, not once per process
    assert f"discord:unreadable-notice:{cid}" in await channel_state_keys(daemon)
    assert asked(fake_llm) == ["barrier"]


@pytest.mark.slow  # waits for a reminder's real due time (2 s)
async def test_reminder_set_in_a_thread_fires_into_it_after_a_restart(
    discord_daemon, platform_daemon, fake_discord, fake_llm
):
    gid, cid = _guild(fake_discord)
    tid = fake_discord.add_thread(gid, cid, bot_member=True)
    daemon = await discord_daemon()
    fake_llm.reply_tool_calls([("create_reminder", {"content": "stretch", "time": "in 2 seconds"})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "Reminder set."})])
    _mention(fake_discord, "remind me to stretch in 2 seconds", gid, tid)
    await _answers(fake_discord, "Reminder set.", channel_id=tid)
    await daemon.stop(timeout=2)
    assert _with_text(fake_discord, REMINDER) == []  # not fired before the restart
    daemon = await _up(await platform_daemon.restart(daemon), fake_discord)
    [fired] = await _answers(fake_discord, f"{REMINDER}: stretch", channel_id=tid)
    assert fired.json["allowed_mentions"] == NO_PINGS
    await _barrier(fake_discord)
    assert len(_with_text(fake_discord, REMINDER)) == 1


async def test_a_duplicate_message_create_is_one_turn_also_after_a_restart(
    discord_daemon, platform_daemon, fake_discord, fake_llm
):
    daemon = await discord_daemon()
    data = fake_discord.user_message("only once")
    fake_discord.dispatch("MESSAGE_CREATE", data)  # the same message id again
    await _answers(fake_discord, "echo: only once")
    daemon = await _up(await platform_daemon.restart(daemon), fake_discord)
    fake_discord.dispatch("MESSAGE_CREATE", data)  # and once more in the new process
    await _barrier(fake_discord)
    assert asked(fake_llm).count("only once") == 1
    assert len(_with_text(fake_discord, "echo: only once")) == 1


async def test_reconnect_mid_conversation_resumes_and_loses_nothing(
    discord_daemon, fake_discord, fake_llm
):
    daemon = await discord_daemon()
    fake_discord.user_message("first")
    await _answers(fake_discord, "echo: first")
    await fake_discord.ask_to_reconnect()  # op 7
    fake_discord.user_message("while you moved")  # kept in the session, replayed on RESUME
    [resume] = await fake_discord.wait_op(RESUME)
    assert resume["d"]["session_id"] == fake_discord.session_id
    await _answers(fake_discord, "echo: while you moved")
    await _barrier(fake_discord)
    assert len(fake_discord.ops(IDENTIFY)) == 1  # resumed, never identified again
    assert daemon.channels["discord"].connected
    assert "echo: first" in str(fake_llm.requests[-1].json["messages"][:-1])  # same session


async def test_a_resumable_invalid_session_resumes(discord_daemon, fake_discord, fake_llm):
    await discord_daemon()
    fake_discord.user_message("before")
    await _answers(fake_discord, "echo: before")
    await fake_discord.invalidate(resumable=True)  # op 9 d=true
    fake_discord.user_message("in between")  # kept in the session, replayed on RESUME
    await fake_discord.wait_op(RESUME)
    await _answers(fake_discord, "echo: in between")
    assert len(fake_discord.ops(IDENTIFY)) == 1


async def test_a_non_resumable_invalid_session_identifies_afresh(
    discord_daemon, fake_discord, fake_llm
):
    daemon = await discord_daemon()
    fake_discord.user_message("before")
    await _answers(fake_discord, "echo: before")
    await fake_discord.invalidate()  # op 9 d=false
    await fake_discord.wait_op(IDENTIFY, 2)
    await _up(daemon, fake_discord)
    await _barrier(fake_discord, "after the new session")
    assert fake_discord.ops(RESUME) == []
    assert asked(fake_llm) == ["before", "after the new session"]


@pytest.mark.slow  # discord.py's own reconnect backoff (up to a few seconds)
async def test_healthz_names_discord_while_its_gateway_is_down(discord_daemon, fake_discord):
    daemon = await discord_daemon()
    assert await channel_state(daemon, "discord") == (200, [], "ok", 1)
    await fake_discord.stop()
    await until(lambda: not daemon.channels["discord"].connected)
    status, failing, why, up = await channel_state(daemon, "discord")
    assert (status, failing, up) == (503, ["channel:discord"], 0)
    # before discord.py's first reconnect fails, then that failure's reason
    assert why == "gateway not connected" or why.startswith("gateway connection failing"), why
    await fake_discord.start()  # the same port: discord.py's reconnect loop finds it
    await _up(daemon, fake_discord)
    assert (await daemon.health()).ok


async def test_a_long_answer_cut_off_by_a_restart_is_not_posted_twice(
    discord_daemon, platform_daemon, fake_discord, fake_llm
):
    daemon = await discord_daemon()
    lines = [f"line {i}: " + "x" * 60 for i in range(80)]  # ~5,600 characters: 3 parts
    fake_llm.reply_tool_calls([("final_result", {"answer": "\n".join(lines)})])
    route = "POST /channels/{channel_id}/messages"
    # Part 1 is posted; part 2 meets a rate limit longer than discord.py waits in place.
    fake_discord.fail(route, 429, retry_after=60, after=1)
    fake_discord.user_message("tell me a lot")
    await fake_discord.wait_until(lambda: len(fake_discord.calls_to(route)) >= 2)
    # Stopped before the outbox retry is due: the next process finishes the delivery.
    daemon = await _up(await platform_daemon.restart(daemon), fake_discord)
    await fake_discord.wait_until(lambda: len(fake_discord.posts(channel_id=4242)) >= 3)
    await _barrier(fake_discord)
    parts = _bot_texts(fake_discord, 4242)[:-1]  # as they read (a preview became part 1)
    assert len(parts) == 3 and "line 0:" in parts[0] and "line 79:" in parts[2]
    assert sum(p.count("line ") for p in parts) == 80  # every line once
    assert all(len(p) <= 2000 for p in parts)
    assert not [k for k in await channel_state_keys(daemon) if ":parts:" in k]  # finished


async def test_messages_are_counted_per_channel(discord_daemon, fake_discord):
    daemon = await discord_daemon()
    fake_discord.user_message("count me")
    await _answers(fake_discord, "echo: count me")
    await until(lambda: daemon.delivery.sent >= 1)
    samples = await metrics(daemon)
    assert value(samples, "bot_messages_in_total", channel="discord") == 1
    assert value(samples, "bot_messages_out_total", channel="discord", kind="reply") == 1
    assert value(samples, "bot_channel_connected", channel="discord") == 1


async def test_what_was_said_while_down_is_answered_once_in_order_saying_it_is_late(
    discord_daemon, fake_discord: FakeDiscord, platform_daemon: daemons.PlatformDaemons
) -> None:
    """After a restart the DM's history is read back from the last message seen. The
    cursor is set back as a crash could leave it (before a message already journaled
    and answered): the inbox drops that one, the two said while down are answered."""
    daemon = await discord_daemon()
    hour_ago = time.time() - 3600
    first = fake_discord.user_message("first", at=hour_ago)
    await _answers(fake_discord, "echo: first")
    await daemon.stop(timeout=2)
    with sqlite3.connect(daemon.settings.data_dir / "bot.db") as db:
        stale = {"4242": [str(int(first["id"]) - 1), hour_ago - 1]}
        db.execute("UPDATE kv SET value = ? WHERE key = 'discord:seen'", (json.dumps(stale),))
    fake_discord.user_message("second", at=hour_ago + 600, live=False)
    fake_discord.user_message("third", at=hour_ago + 1200, live=False)

    await _up(await platform_daemon.restart(daemon), fake_discord)
    await _answers(fake_discord, "echo: third")
    await _barrier(fake_discord)
    contents = _bot_texts(fake_discord, 4242)  # as they read (previews edited into answers)
    assert [c.split("echo: ")[-1] for c in contents] == ["first", "second", "third", "barrier"]
    late = "(Late answer: I was offline when your message came, 50 min ago.)"
    assert contents[1].startswith(late)
    assert contents[2].startswith("(Late answer: I was offline when your message came, 40 min")
    assert not contents[3].startswith("(Late")


# -- streamed answers through the daemon (issue 40; the adapter's rules: test_discord_preview)
STORY = " ".join(f"word{n}" for n in range(60))  # about 400 characters, no Markdown
QUICK = {"private_interval_s": 0.1, "group_interval_s": 2.0}  # Discord: DMs at 1 s at least


def _bot_texts(fake: FakeDiscord, channel_id: int) -> list[str]:
    """What the bot's messages in a channel read now (edits applied)."""
    said = fake.history.get(channel_id, [])
    return [m["content"] for m in said if m["author"]["id"] == str(fake.bot_id)]


def _previews(fake: FakeDiscord, channel_id: int, before: float) -> list[Any]:
    """Posts and edits in a channel made while the model was still writing."""
    return [
        c
        for c in fake.calls
        if c.route in (POST, EDIT) and c.params["channel_id"] == str(channel_id) and c.at < before
    ]


async def test_a_dm_answer_grows_in_one_message_that_becomes_the_final(
    discord_daemon, fake_discord: FakeDiscord, fake_llm
) -> None:
    fake_llm.reply(streamed_answer(STORY, seconds=4.0))
    await discord_daemon(QUICK)
    fake_discord.user_message("tell me a story")
    await fake_discord.wait_until(lambda: _bot_texts(fake_discord, 4242) == [STORY], 30)
    await _barrier(fake_discord)  # the same chat: the story's turn is over
    assert _bot_texts(fake_discord, 4242) == [STORY, "echo: barrier"]
    (_, last) = fake_llm.streamed[0]
    shown = _previews(fake_discord, 4242, last)
    texts = [c.json["content"] for c in shown]
    assert shown[0].route == POST and len(shown) >= 3, texts  # posted, then edited
    assert all(STORY.startswith(t) for t in texts) and sorted(texts, key=len) == texts
    assert fake_discord.count(POST, channel_id=4242) == 2  # the story's one, the barrier's


async def test_a_guild_answer_is_previewed_at_the_group_interval(
    discord_daemon, fake_discord: FakeDiscord, fake_llm
) -> None:
    gid, cid = _guild(fake_discord)
    fake_llm.reply(streamed_answer(STORY, seconds=4.5))
    await discord_daemon(QUICK)
    _mention(fake_discord, "tell me a story", gid, cid)
    await fake_discord.wait_until(lambda: _bot_texts(fake_discord, cid) == [STORY], 30)
    await until(lambda: fake_llm.streamed)
    shown = _previews(fake_discord, cid, fake_llm.streamed[0][1])
    assert len(shown) >= 2 and fake_discord.count(POST, channel_id=cid) == 1
    gaps = [b.at - a.at for a, b in itertools.pairwise(shown)]
    assert min(gaps) >= QUICK["group_interval_s"] - 0.3, gaps  # not a DM's 1 s


async def test_discord_with_streaming_off_gets_the_final_answer_only(
    discord_daemon, fake_discord: FakeDiscord, fake_llm
) -> None:
    fake_llm.reply(streamed_answer(STORY, seconds=1.5))
    await discord_daemon(QUICK, streaming=False)
    fake_discord.user_message("tell me a story")
    [post] = await _answers(fake_discord, STORY)
    assert post.json["content"] == STORY and fake_discord.count(EDIT) == 0
    assert fake_llm.requests[0].json.get("stream") is None  # not even asked to stream


async def test_a_429_on_one_chats_edit_pauses_that_chat_only(
    discord_daemon, fake_discord: FakeDiscord, fake_llm
) -> None:
    for _ in range(2):
        fake_llm.reply(streamed_answer(STORY, seconds=5.0))
    await discord_daemon(QUICK)
    # The first preview edit (never the final) is told to wait 30 s.
    fake_discord.fail(EDIT, 429, retry_after=30, match=lambda body: body.get("content") != STORY)
    fake_discord.user_message("tell me a story")
    fake_discord.user_message("tell me a story", channel_id=4343)
    both = lambda: [_bot_texts(fake_discord, c) for c in (4242, 4343)] == [[STORY]] * 2  # noqa: E731
    await fake_discord.wait_until(both, 25)  # well before the 30 s
    [refused] = [c for c in fake_discord.calls_to(EDIT) if not c.ok]
    paused = refused.params["channel_id"]
    after = [c for c in fake_discord.calls_to(EDIT) if c.at > refused.at]
    assert [c.json["content"] for c in after if c.params["channel_id"] == paused] == [STORY]
    other = [c.json["content"] for c in after if c.params["channel_id"] != paused]
    assert any(t != STORY for t in other), other  # the other chat kept previewing


async def test_a_command_sent_as_a_reply_to_the_bot_is_the_command(
    discord_daemon, fake_discord: FakeDiscord, fake_llm
) -> None:
    """Discord's Reply button quotes the message replied to in front of the text for the
    model; a command keeps its text, so /reminders is answered without the model and
    /stop, replying to the answer being written, stops it."""
    fake_llm.reply(streamed_answer(STORY, seconds=12.0))
    await discord_daemon(QUICK)
    gid, cid = _guild(fake_discord)
    earlier = fake_discord.bot_said("It is sunny.", cid)
    fake_discord.user_message(
        "/reminders", guild_id=gid, channel_id=cid, referenced_message=earlier
    )
    await _answers(fake_discord, "no active reminders", channel_id=cid)
    assert fake_llm.requests == []
    fake_discord.user_message("tell me a story")
    await fake_discord.wait_until(lambda: bool(_bot_texts(fake_discord, 4242)))  # a preview
    [preview] = [
        m for m in fake_discord.history[4242] if m["author"]["id"] == str(fake_discord.bot_id)
    ]
    fake_discord.user_message("/stop", referenced_message=preview)
    await _answers(fake_discord, "Stopped", channel_id=4242)
    assert STORY not in _bot_texts(fake_discord, 4242) and len(fake_llm.requests) == 1


async def test_a_poll_in_a_dm_reaches_the_model_as_its_question_and_answers(
    discord_daemon, fake_discord, fake_llm
):
    """A poll has no content: the model got an empty turn and the bot posted "echo:"."""
    await discord_daemon()
    answers = [
        {"answer_id": i, "poll_media": {"text": text}} for i, text in ((1, "Pizza"), (2, "Sushi"))
    ]
    poll = {"question": {"text": "Pizza or sushi tonight?"}, "answers": answers,
            "expiry": discord_api.now_iso(time.time() + 86400), "allow_multiselect": False,
            "layout_type": 1}  # fmt: skip
    fake_discord.user_message("", poll=poll)
    said = "[poll: Pizza or sushi tonight? — Pizza / Sushi]"
    await _answers(fake_discord, f"echo: {said}")
    await _barrier(fake_discord)
    assert asked(fake_llm) == [said, "barrier"]
