"""Whole turns through the daemon: fake Slack (Socket Mode and signed HTTP events) ->
real slack-bolt / slack_sdk -> the SlackChannel its spec builds from config -> daemon ->
real litellm -> fake LLM -> chat.postMessage back to the fake."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from typing import Any

import pytest
import pytest_asyncio

from bot.daemon import Daemon
from tests.fakes import daemons, slack_api
from tests.fakes.daemons import asked, channel_state_keys, until_no_state_key
from tests.fakes.llm_server import streamed_answer
from tests.fakes.slack_api import USER, FakeSlack, post_signed
from tests.fakes.waiting import STEP_S, inbox_done, until
from tests.fakes.web_client import channel_state, metrics, value

fake_slack = slack_api.fake_slack
platform_daemon = daemons.platform_daemon
TUNING = {"slack": {"ping_interval": slack_api.PING_INTERVAL_S, "max_wait_s": 2.0}}
REMINDER = "⏰ Reminder"


@pytest_asyncio.fixture
async def slack_daemon(fake_slack: FakeSlack, platform_daemon: daemons.PlatformDaemons) -> Any:
    """Start a daemon whose only platform is Slack (Socket Mode and HTTP events).

    The fake is a dependency first, so it is torn down after the daemons.
    """

    async def start(streaming_keys: dict[str, Any] | None = None, **section: Any) -> Daemon:
        values = {
            "bot_token": fake_slack.bot_token,
            "app_token": fake_slack.app_token,
            "signing_secret": fake_slack.signing_secret,
            "api_url": fake_slack.api_url,
            "allow_from": ["*"],
            **section,
        }
        keys = {"streaming": streaming_keys} if streaming_keys else {}
        return await _up(await platform_daemon({"slack": values}, extras=TUNING, **keys))

    return start


async def _up(daemon: Daemon) -> Daemon:
    await until(lambda: daemon.channels["slack"].connected)
    return daemon


async def _say(fake_slack: FakeSlack, text: str, **kw: Any) -> dict[str, Any]:
    """A user's message over Socket Mode, acknowledged (so it is journaled)."""
    event = fake_slack.message(text, **kw)
    await fake_slack.wait_acked(await fake_slack.push(event))
    return event


async def _answers(fake_slack: FakeSlack, text: str, n: int = 1, **kw: Any) -> list[dict]:
    await fake_slack.wait_until(lambda: len(_with_text(fake_slack, text, **kw)) >= n)
    return _with_text(fake_slack, text, **kw)


def _with_text(fake_slack: FakeSlack, text: str, **kw: Any) -> list[dict[str, Any]]:
    """Delivered answers holding ``text``: a streamed preview (a turn that outlasts the
    first interval on a loaded machine) has no delivery metadata until the final."""
    return [p for p in fake_slack.posts(**kw) if text in p["text"] and "metadata" in p]


async def _barrier(fake_slack: FakeSlack, text: str = "barrier") -> None:
    """One more DM answered: everything journaled before it has been handled."""
    await _say(fake_slack, text)
    await _answers(fake_slack, f"echo: {text}")


async def test_dm_turn_end_to_end(slack_daemon, fake_slack: FakeSlack, fake_llm) -> None:
    daemon = await slack_daemon()
    event = await _say(fake_slack, "hello **there**")  # Markdown bold
    [post] = await _answers(fake_slack, "echo: hello", channel="D0DM")
    assert post["text"] == "echo: hello *there*"  # mrkdwn bold
    assert "thread_ts" not in post  # a DM is answered in the DM itself
    assert post["metadata"]["event_type"] == "bot_delivery"
    block = fake_llm.requests[-1].json["messages"][-1]["content"]
    assert "Channel: slack" in block and f"User: {USER}" in block
    # The :eyes: working signal was on the user's message during the turn, and is gone.
    [added] = fake_slack.calls_to("reactions.add")
    assert (added.params["timestamp"], added.params["name"]) == (event["ts"], "eyes")
    await fake_slack.wait_until(lambda: not fake_slack.reactions)
    assert fake_slack.max_open_sockets == 1
    assert daemon.channels["slack"].connected


async def test_eyes_a_restart_left_on_a_message_come_off_with_its_answer(
    slack_daemon, platform_daemon, fake_slack, fake_llm
) -> None:
    """A message marked and answered by one process leaves no mark behind. A turn cut
    off by a stop is run again by the next process, whose answer takes off the :eyes:
    the first one put on the message even when its own turn is too quick to mark it:
    the first process kept the mark in the channel's state."""
    daemon = await slack_daemon()
    await _barrier(fake_slack)  # marked (typing_after_s is 0 here) and answered here
    await fake_slack.wait_until(lambda: not fake_slack.reactions)
    await until_no_state_key(daemon, "eyes")
    fake_llm.reply_tool_calls([("final_result", {"answer": "too late"})], delay=30)
    event = await _say(fake_slack, "a slow one")
    await fake_slack.wait_until(lambda: fake_slack.reactions)
    await daemon.stop(timeout=2)  # mid-turn: the message stays journaled, unanswered
    assert fake_slack.reactions == {(event["channel"], event["ts"], "eyes")}
    daemon = await _up(await platform_daemon.restart(daemon, agent={"typing_after_s": 60}))
    await _answers(fake_slack, "echo: a slow one")
    await fake_slack.wait_until(lambda: not fake_slack.reactions)
    assert len(fake_slack.calls_to("reactions.add")) == 2  # the second turn marked nothing
    await until_no_state_key(daemon, "eyes")


async def test_a_stopped_turn_takes_its_eyes_off_and_says_so(
    slack_daemon, fake_slack, fake_llm
) -> None:
    """/stop while the model works: no answer will come to take the :eyes: off, so the
    stop does; "Stopped." answers the /stop."""
    daemon = await slack_daemon()
    fake_llm.reply_tool_calls([("final_result", {"answer": "never said"})], delay=30)
    event = await _say(fake_slack, "a slow one")
    await fake_slack.wait_until(lambda: fake_slack.reactions)
    await _say(fake_slack, "/stop")
    await _answers(fake_slack, "Stopped.")
    await fake_slack.wait_until(lambda: not fake_slack.reactions)
    assert [c.params["timestamp"] for c in fake_slack.calls_to("reactions.remove")] == [event["ts"]]
    await until_no_state_key(daemon, "eyes")
    assert not _with_text(fake_slack, "never said")


async def test_mention_is_answered_in_its_new_thread_once(slack_daemon, fake_slack, fake_llm):
    await slack_daemon()
    mention = fake_slack.mention("what's the plan?")
    twin = fake_slack.event_for(fake_slack.messages["C0GENERAL"][-1], channel="C0GENERAL")
    for event in (mention, twin):  # Slack sends app_mention and message for one mention
        await fake_slack.wait_acked(await fake_slack.push(event))
    [post] = await _answers(fake_slack, "echo: what's the plan?", channel="C0GENERAL")
    assert post["thread_ts"] == mention["ts"]
    await _barrier(fake_slack)
    assert asked(fake_llm).count("what's the plan?") == 1
    assert len(_with_text(fake_slack, "echo: what's the plan?")) == 1


async def test_a_reply_inside_the_thread_continues_the_conversation(
    slack_daemon, fake_slack, fake_llm
):
    await slack_daemon()
    mention = fake_slack.mention("remember the number 42")
    await fake_slack.wait_acked(await fake_slack.push(mention))
    await _answers(fake_slack, "echo: remember", channel="C0GENERAL")
    # No mention needed inside a thread the bot answered in.
    await _say(fake_slack, "which number?", channel="C0GENERAL", thread_ts=mention["ts"])
    [post] = await _answers(fake_slack, "echo: which number?", channel="C0GENERAL")
    assert post["thread_ts"] == mention["ts"]
    earlier = str(fake_llm.requests[-1].json["messages"][:-1])  # the session so far
    assert "remember the number 42" in earlier and "echo: remember the number 42" in earlier
    # Channel chatter outside the thread stays unanswered.
    await _say(fake_slack, "lunch anyone?", channel="C0GENERAL")
    await _barrier(fake_slack)
    assert "lunch anyone?" not in asked(fake_llm)


async def test_allow_from_refuses_others_without_a_model_call(slack_daemon, fake_slack, fake_llm):
    await slack_daemon(allow_from=["U0BOB"])
    await _say(fake_slack, "let me in")  # from U0ALICE
    [notice] = await fake_slack.wait_posts(1, channel="D0DM")
    assert "only answers approved users" in notice["text"]
    assert fake_llm.requests == []
    await _say(fake_slack, "hi from bob", channel="D0BOB", user="U0BOB")
    await _answers(fake_slack, "echo: hi from bob", channel="D0BOB")
    assert asked(fake_llm) == ["hi from bob"]


@pytest.mark.slow  # waits for a reminder's real due time (2 s)
async def test_reminder_set_in_a_thread_fires_into_it_after_a_restart(
    slack_daemon, platform_daemon, fake_slack, fake_llm
):
    daemon = await slack_daemon()
    fake_llm.reply_tool_calls([("create_reminder", {"content": "stretch", "time": "in 2 seconds"})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "Reminder set."})])
    mention = fake_slack.mention("remind me to stretch in 2 seconds")
    await fake_slack.wait_acked(await fake_slack.push(mention))
    await _answers(fake_slack, "Reminder set.", channel="C0GENERAL")
    await daemon.stop(timeout=2)
    assert _with_text(fake_slack, REMINDER) == []  # not fired before the restart
    daemon = await _up(await platform_daemon.restart(daemon))
    [fired] = await _answers(fake_slack, f"{REMINDER}: stretch", channel="C0GENERAL")
    assert fired["thread_ts"] == mention["ts"]
    await _barrier(fake_slack)
    assert len(_with_text(fake_slack, REMINDER)) == 1


async def test_the_same_event_thrice_and_after_a_restart_is_one_turn(
    slack_daemon, platform_daemon, fake_slack, fake_llm
):
    daemon = await slack_daemon()
    assert daemon.web is not None
    url = daemon.web.url + "/slack/events"
    event = fake_slack.message("only once")
    body = fake_slack.body(event, event_id="EvDUP")
    for retry in (None, 1, 2):  # HTTP Events API: Slack's redeliveries
        status, _ = await post_signed(url, body, fake_slack.signing_secret, retry_num=retry)
        assert status == 200
    await _answers(fake_slack, "echo: only once")
    daemon = await _up(await platform_daemon.restart(daemon))
    assert daemon.web is not None
    again = daemon.web.url + "/slack/events"
    status, _ = await post_signed(again, body, fake_slack.signing_secret, retry_num=3)
    assert status == 200
    await fake_slack.wait_acked(await fake_slack.push(event, event_id="EvDUP", retry_attempt=4))
    await _barrier(fake_slack)
    assert asked(fake_llm).count("only once") == 1
    assert len(_with_text(fake_slack, "echo: only once")) == 1


async def test_a_lost_post_is_looked_up_after_a_restart_not_posted_twice(
    slack_daemon, platform_daemon, fake_slack, fake_llm
):
    daemon = await slack_daemon()
    # Slack takes the answer but the connection dies unanswered, and the lookup that
    # follows fails too: whether the answer is out is still open when the daemon stops.
    fake_slack.reset_after_accept("chat.postMessage")
    fake_slack.fail("conversations.history", 500, "internal_error")
    await _say(fake_slack, "say it once")
    await fake_slack.wait_calls("conversations.history")
    # Stopped before the outbox retry is due: the next process looks the post up first.
    daemon = await _up(await platform_daemon.restart(daemon))
    await fake_slack.wait_calls("conversations.history", 2)
    await _barrier(fake_slack)
    assert len(_with_text(fake_slack, "echo: say it once")) == 1
    assert len(fake_slack.calls_to("chat.postMessage")) == 2  # the lost one and the barrier
    assert not [k for k in await channel_state_keys(daemon) if "lost-post" in k]  # settled


async def test_a_long_answer_cut_off_by_a_restart_is_not_posted_twice(
    slack_daemon, platform_daemon, fake_slack, fake_llm
):
    daemon = await slack_daemon()
    answer = "\n\n".join(
        f"Paragraph {i}: " + "word " * 180 for i in range(20)
    )  # under the answer cap
    fake_llm.reply_tool_calls([("final_result", {"answer": answer})])
    fake_slack.fail("chat.postMessage", 500, "internal_error", skip=1)  # part 2 fails
    await _say(fake_slack, "tell me a lot")
    await fake_slack.wait_calls("chat.postMessage", 2)
    daemon = await _up(await platform_daemon.restart(daemon))
    await _barrier(fake_slack)
    parts = [p["text"] for p in fake_slack.posts(channel="D0DM")][:-1]
    assert len(parts) == len({p["metadata"]["event_payload"]["key"]
                              for p in fake_slack.posts(channel="D0DM")[:-1]})  # fmt: skip
    assert [p.split(":")[0] for p in " ".join(parts).split("Paragraph ")[1:]] == [
        str(i) for i in range(20)
    ]  # every paragraph once, in order
    assert not [k for k in await channel_state_keys(daemon) if ":parts:" in k]  # finished


async def test_healthz_names_slack_while_its_socket_is_down(slack_daemon, fake_slack):
    daemon = await slack_daemon()
    assert await channel_state(daemon, "slack") == (200, [], "ok", 1)
    fake_slack.fail("apps.connections.open", 500, "internal_error", times=1000)
    await fake_slack.drop_sockets()
    await until(lambda: not daemon.channels["slack"].connected)
    down = await channel_state(daemon, "slack")
    assert down == (503, ["channel:slack"], "Socket Mode connection down (reconnecting)", 0)
    fake_slack._failures.clear()
    await until(lambda: daemon.channels["slack"].connected)
    assert (await daemon.health()).ok


async def test_messages_are_counted_per_channel(slack_daemon, fake_slack):
    daemon = await slack_daemon()
    await _say(fake_slack, "count me")
    await _answers(fake_slack, "echo: count me")
    await until(lambda: daemon.delivery.sent >= 1)
    samples = await metrics(daemon)
    assert value(samples, "bot_messages_in_total", channel="slack") == 1
    assert value(samples, "bot_messages_out_total", channel="slack", kind="reply") == 1
    assert value(samples, "bot_channel_connected", channel="slack") == 1


async def test_ready_is_logged_only_once_socket_mode_is_connected(
    fake_slack: FakeSlack, platform_daemon: daemons.PlatformDaemons
) -> None:
    """``ready:`` names the channels that are up: Slack's socket must be open by then.
    The fake holds the WebSocket upgrade; the ready line records how many sockets the
    fake had opened when it was written (and, if written early, lets the socket in)."""
    fake_slack.socket_gate = gate = asyncio.Event()
    opened_at_ready: list[int] = []

    class AtReady(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.getMessage().startswith("ready:"):
                opened_at_ready.append(fake_slack.sockets_opened)
                gate.set()

    handler, logger = AtReady(), logging.getLogger("bot.daemon")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        values = {
            "bot_token": fake_slack.bot_token,
            "app_token": fake_slack.app_token,
            "api_url": fake_slack.api_url,
        }
        start = asyncio.create_task(platform_daemon({"slack": values}, extras=TUNING))
        await fake_slack.wait_until(lambda: fake_slack.socket_attempts >= 1)
        await asyncio.wait({start}, timeout=0.5)  # a start that does not wait is done by now
        gate.set()
        daemon = await asyncio.wait_for(start, STEP_S)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert opened_at_ready == [1]
    assert daemon.channels["slack"].connected


# -- streamed answers through the daemon (issue 40; the adapter's rules: test_slack_preview)
STORY = " ".join(f"word{n}" for n in range(60))  # about 400 characters, no Markdown
QUICK = {"private_interval_s": 0.1, "group_interval_s": 1.5}
UPDATES = ("chat.postMessage", "chat.update")
STREAMS = ("chat.startStream", "chat.appendStream", "chat.stopStream")


def _final(fake_slack: FakeSlack, channel: str) -> bool:
    """The channel holds one bot message: the whole story, delivered (its metadata)."""
    posts = fake_slack.posts(channel)
    return [p["text"] for p in posts] == [STORY] and "metadata" in posts[0]


async def test_a_dm_answer_grows_in_one_message_that_becomes_the_final(
    slack_daemon, fake_slack: FakeSlack, fake_llm
) -> None:
    fake_llm.reply(streamed_answer(STORY, seconds=4.0))
    await slack_daemon(QUICK)
    await _say(fake_slack, "tell me a story")
    await fake_slack.wait_until(lambda: _final(fake_slack, "D0DM"), 30)
    (_, last) = fake_llm.streamed[0]
    shown = [c for c in fake_slack.calls if c.method in UPDATES and c.ok]
    assert shown[0].method == "chat.postMessage" and shown[0].at < last  # while writing
    texts = [c.params["text"] for c in shown]
    assert len(texts) >= 3 and all(STORY.startswith(t) for t in texts), texts  # it grew
    assert sorted(texts, key=len) == texts and len(set(texts[:-1])) == len(texts) - 1
    assert fake_slack.count("chat.postMessage") == 1 and fake_slack.count(*STREAMS) == 0


async def test_a_channel_thread_streams_natively_at_the_group_interval(
    slack_daemon, fake_slack: FakeSlack, fake_llm
) -> None:
    fake_llm.reply(streamed_answer(STORY, seconds=4.0))
    await slack_daemon(QUICK)
    asked = fake_slack.mention("tell me a story")
    await fake_slack.wait_acked(await fake_slack.push(asked))
    await fake_slack.wait_until(lambda: _final(fake_slack, "C0GENERAL"), 30)
    [post] = fake_slack.posts("C0GENERAL")
    assert post["thread_ts"] == asked["ts"] and not fake_slack.streams  # stopped in place
    grew = [c for c in fake_slack.calls if c.method in STREAMS[:2]]
    assert len(grew) >= 2 and fake_slack.count("chat.postMessage", "chat.update") == 0
    gaps = [b.at - a.at for a, b in itertools.pairwise(grew)]
    # The group's pace (1.5 s), neither the DM's 0.1 s nor the workspace's own 0.6 s.
    assert min(gaps) >= QUICK["group_interval_s"] - 0.3, gaps
    assert len(fake_slack.calls_to("chat.stopStream")) == 1


async def test_slack_with_streaming_off_gets_the_final_answer_only(
    slack_daemon, fake_slack: FakeSlack, fake_llm
) -> None:
    fake_llm.reply(streamed_answer(STORY, seconds=1.5))
    await slack_daemon(QUICK, streaming=False)
    await _say(fake_slack, "tell me a story")
    [post] = await fake_slack.wait_posts(1, timeout=30, channel="D0DM")
    assert post["text"] == STORY
    assert fake_slack.count("chat.update", *STREAMS) == 0
    assert fake_llm.requests[0].json.get("stream") is None  # not even asked to stream


async def test_a_429_on_a_preview_edit_holds_up_no_answer(
    slack_daemon, fake_slack: FakeSlack, fake_llm
) -> None:
    """Slack's limit is the workspace's: its previews wait, both answers do not."""
    for _ in range(2):
        fake_llm.reply(streamed_answer(STORY, seconds=3.0))
    await slack_daemon(QUICK)
    # A preview's edit (the final carries the delivery key in its metadata).
    fake_slack.fail("chat.update", 429, retry_after=30, match=lambda p: "metadata" not in p)
    await _say(fake_slack, "tell me a story")
    await _say(fake_slack, "tell me a story", channel="D0OTHER")
    both = lambda: _final(fake_slack, "D0DM") and _final(fake_slack, "D0OTHER")  # noqa: E731
    await fake_slack.wait_until(both, 25)  # well before the 30 s Slack asked for
    refused = next(c for c in fake_slack.calls_to("chat.update") if not c.ok)
    chat = refused.params["channel"]
    after = [c for c in fake_slack.calls_to("chat.update") if c.at > refused.at]
    assert [c.params["text"] for c in after if c.params["channel"] == chat] == [STORY]


async def test_stop_pressed_on_a_streamed_answer_ends_its_turn_as_a_stop_does(
    slack_daemon, fake_slack: FakeSlack, fake_llm
) -> None:
    """The person presses Slack's stop on the answer streaming into their thread (the
    next chat.appendStream is refused with stopped_by_user): the turn ends there, as
    their /stop would end it. Nothing more is written to the stopped message (no final
    edit, no post), the text shown stays, and the stopped question is not part of the
    chat: the thread's next message is answered without it."""
    daemon = await slack_daemon(QUICK)
    fake_llm.reply(streamed_answer(STORY, seconds=30.0))
    asked = fake_slack.mention("tell me a story")
    await fake_slack.wait_acked(await fake_slack.push(asked))
    await fake_slack.wait_until(lambda: fake_slack.count("chat.startStream") == 1, STEP_S)
    fake_slack.fail("chat.appendStream", 200, "stopped_by_user", times=100)
    fake_slack.fail("chat.stopStream", 200, "stopped_by_user", times=100)
    await inbox_done(daemon, f"C0GENERAL:{asked['ts']}")  # long before the 30 s
    stopped_at = fake_slack.calls_to("chat.appendStream")[-1].at
    [shown] = fake_slack.posts("C0GENERAL")
    assert STORY.startswith(shown["text"]) and len(shown["text"]) < len(STORY)
    later = fake_slack.mention("and now?", thread_ts=asked["ts"])
    await fake_slack.wait_acked(await fake_slack.push(later))
    await _answers(fake_slack, "echo: and now?", channel="C0GENERAL")
    assert not [c for c in fake_slack.calls if c.at > stopped_at and c.method in STREAMS]
    assert fake_slack.count("chat.update") == 0 and fake_slack.posts("C0GENERAL")[0] == shown
    sent = json.dumps(fake_llm.requests[-1].json["messages"])
    assert "and now?" in sent and "tell me a story" not in sent


# -- what the bot posts pings no crowd ---------------------------------------------------
LOUD = "<!channel> lunch! <!here|here>, <!everyone> and <!subteam^S0DEVS|@devs>: ask <@U0BOB>. "
QUIET = "@channel lunch! @here, @everyone and @devs: ask @U0BOB."


async def test_an_answer_never_pings_the_channel_or_a_group(slack_daemon, fake_slack, fake_llm):
    """The model wrote Slack's broadcast mentions (a user asked it to, or a page it read
    did): every text Slack gets, the streamed thread's, the edited DM preview's and the
    final's, says them as words, a mention of one person too (as Discord's answers ping
    no one)."""
    await slack_daemon(QUICK)
    for _ in range(2):
        fake_llm.reply(streamed_answer(LOUD * 5, seconds=4.0))
    asked = fake_slack.mention("announce lunch")
    await fake_slack.wait_acked(await fake_slack.push(asked))
    await _say(fake_slack, "announce lunch here too")
    await fake_slack.wait_until(lambda: len(_with_text(fake_slack, "lunch")) == 2, 30)
    sent = [c for c in fake_slack.calls if c.method in (*UPDATES, *STREAMS)]
    assert {c.method for c in sent} >= {"chat.startStream", "chat.update"}  # previews too
    texts = [str(c.params.get("text") or c.params.get("markdown_text") or "") for c in sent]
    assert not [t for t in texts if "<!" in t or "<@" in t], texts
    finals = [p["text"].strip() for p in _with_text(fake_slack, "lunch")]
    assert finals == [" ".join([QUIET] * 5)] * 2


async def test_a_command_after_a_space_or_a_mention_is_the_command(
    slack_daemon, fake_slack, fake_llm
):
    """Slack's client takes a leading "/" as its own slash command (README: Slack), so
    a user writes " /timezone Berlin" or "@bot /reminders": each is the chat command."""
    await slack_daemon()
    await _say(fake_slack, " /timezone Berlin")
    await _answers(fake_slack, "Time zone set to Europe/Berlin")
    mention = fake_slack.mention("/reminders")
    await fake_slack.wait_acked(await fake_slack.push(mention))
    [post] = await _answers(fake_slack, "no active reminders", channel="C0GENERAL")
    assert post["thread_ts"] == mention["ts"] and fake_llm.requests == []


async def test_a_command_as_the_first_mention_in_a_thread_is_the_command(
    slack_daemon, fake_slack, fake_llm
):
    """The thread read as context on a first mention stays out of the command's text:
    "@bot /reminders" inside someone's thread is /reminders, not a question to the model."""
    await slack_daemon()
    root = fake_slack.add_message("team lunch friday?", channel="C0GENERAL", user="U0ANN")
    fake_slack.add_message("sure", channel="C0GENERAL", user="U0BOB", thread_ts=root["ts"])
    mention = fake_slack.mention("/reminders", thread_ts=root["ts"])
    await fake_slack.wait_acked(await fake_slack.push(mention))
    [post] = await _answers(fake_slack, "no active reminders", channel="C0GENERAL")
    assert post["thread_ts"] == root["ts"] and fake_llm.requests == []
    assert fake_slack.calls_to("conversations.replies")  # the thread was read all the same


async def test_soul_set_keeps_the_lines_and_indentation_as_typed(
    fake_slack: FakeSlack, platform_daemon: daemons.PlatformDaemons
) -> None:
    """README: `/soul set <text>` takes the rest of the message, lines kept; Slack's
    clean-up of the mention left indented lists and code flattened."""
    section = {
        "bot_token": fake_slack.bot_token,
        "app_token": fake_slack.app_token,
        "api_url": fake_slack.api_url,
        "allow_from": ["*"],
    }
    daemon = await _up(
        await platform_daemon({"slack": section}, extras=TUNING, admins=[f"slack:{USER}"])
    )
    body = "# Rules\n- be brief\n    - nested:  at most 3 lines\n```\ndef f():\n    return 1\n```"
    await _say(fake_slack, " /soul set " + body)
    await _answers(fake_slack, "saved as version")
    saved = (daemon.settings.data_dir / "workspaces" / "default" / "SOUL.md").read_text()
    assert saved.rstrip("\n") == body


async def test_a_shared_message_reaches_the_model_with_or_without_a_comment(
    slack_daemon, fake_slack, fake_llm
):
    """Shared into the DM, a message's words are in the event's ``attachments``: without a
    comment the share was ignored, with one only the comment reached the model."""
    await slack_daemon()
    share = [{"is_msg_unfurl": True, "is_share": True, "channel_id": "C0123",
              "ts": "1700000000.000100", "author_id": "U0BOB", "author_name": "Bob",
              "text": "Prod deploy is blocked until the DB migration finishes",
              "from_url": "https://acme.slack.com/archives/C0123/p1700000000000100"}]  # fmt: skip
    quote = "> shared message from Bob: Prod deploy is blocked until the DB migration finishes"
    await _say(fake_slack, "", attachments=share)
    await _say(fake_slack, "what does this mean for us?", attachments=share)
    await _barrier(fake_slack)
    assert asked(fake_llm) == [quote, f"what does this mean for us?\n{quote}", "barrier"]


async def test_links_channels_and_mentions_reach_the_model_readable(
    slack_daemon, fake_slack, fake_llm
):
    """Slack's ``<...>`` sequences reached the model raw; now as Slack shows them."""
    await slack_daemon()
    await _say(
        fake_slack,
        "Can you read <https://example.com/spec|the spec> and tell <@U0BOB> what to post"
        " in <#C0123|general>? Also <!subteam^S01|@oncall> <mailto:a@b.co|a@b.co>",
    )
    await _barrier(fake_slack)
    assert asked(fake_llm)[0] == (
        "Can you read the spec (https://example.com/spec) and tell @U0BOB what to post"
        " in #general? Also @oncall a@b.co"
    )


async def test_help_and_the_pairing_code_say_how_a_command_is_typed_in_slack(
    platform_daemon: daemons.PlatformDaemons, fake_slack: FakeSlack, fake_llm
):
    """Slack's client takes a leading "/" for its own: the pairing reply said "approve it
    with /approve CODE" and /help listed "/remind", none of which reached the bot."""
    section = {
        "bot_token": fake_slack.bot_token,
        "app_token": fake_slack.app_token,
        "api_url": fake_slack.api_url,
    }  # allow_from empty: strangers get a pairing code
    await _up(await platform_daemon({"slack": section}, extras=TUNING, admins=["slack:U0BOB"]))
    hint = "start a command with a space (' /help') or after @mentioning the bot"
    await _say(fake_slack, "hi")  # U0ALICE, a stranger
    [code] = await fake_slack.wait_posts(1, channel="D0DM")
    assert "/approve " in code["text"] and hint in code["text"], code["text"]
    await _say(fake_slack, " /help", channel="D0BOB", user="U0BOB")
    [help_] = await fake_slack.wait_posts(1, channel="D0BOB")
    assert help_["text"].startswith("Commands") and hint in help_["text"], help_["text"]
    assert fake_llm.requests == []
