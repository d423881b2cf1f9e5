"""Whole turns through the daemon: fake Slack (Socket Mode and signed HTTP events) ->
real slack-bolt / slack_sdk -> the SlackChannel its spec builds from config -> daemon ->
real litellm -> fake LLM -> chat.postMessage back to the fake."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
import pytest_asyncio

from bot.daemon import Daemon
from tests.fakes import daemons, slack_api
from tests.fakes.daemons import asked, channel_state_keys
from tests.fakes.slack_api import USER, FakeSlack, post_signed
from tests.fakes.waiting import until
from tests.fakes.web_client import channel_state, metrics, value

fake_slack = slack_api.fake_slack
platform_daemon = daemons.platform_daemon
TUNING = {"slack": {"ping_interval": 0.2, "max_wait_s": 2.0}}
REMINDER = "⏰ Reminder"


@pytest_asyncio.fixture
async def slack_daemon(fake_slack: FakeSlack, platform_daemon: daemons.PlatformDaemons) -> Any:
    """Start a daemon whose only platform is Slack (Socket Mode and HTTP events).

    The fake is a dependency first, so it is torn down after the daemons.
    """

    async def start(**section: Any) -> Daemon:
        values = {
            "bot_token": fake_slack.bot_token,
            "app_token": fake_slack.app_token,
            "signing_secret": fake_slack.signing_secret,
            "api_url": fake_slack.api_url,
            "allow_from": ["*"],
            **section,
        }
        return await _up(await platform_daemon({"slack": values}, extras=TUNING))

    return start


async def _up(daemon: Daemon) -> Daemon:
    await until(lambda: daemon.channels["slack"].connected, 10)
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
    return [p for p in fake_slack.posts(**kw) if text in p["text"]]


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
    await until(lambda: daemon.channels["slack"].connected, 10)
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
        daemon = await asyncio.wait_for(start, 20)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert opened_at_ready == [1]
    assert daemon.channels["slack"].connected
