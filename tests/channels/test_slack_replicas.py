"""Slack's :eyes: with two replicas on one PostgreSQL store (in one process, each with
its own web server taking signed HTTP events): the replica that runs a turn marks the
message even when the other one received it, and a replica that takes a chat over
takes off the mark the chat's previous owner left, though its own turn never marks. A
/stop either replica receives ends the turn on the one running the chat."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.cluster.partitions import lease_name, partition_of
from bot.daemon import Daemon
from bot.dispatcher.stops import STOPPED
from bot.messages import ChatKey
from tests.fakes import daemons, slack_api
from tests.fakes.daemons import until_no_state_key
from tests.fakes.pg_schema import empty_schema
from tests.fakes.slack_api import FakeSlack, post_signed
from tests.fakes.waiting import until

fake_slack = slack_api.fake_slack
platform_daemon = daemons.platform_daemon

PARTITIONS = 8
# A TTL well above a loaded machine's stalls: the leases must not move while a test looks;
# a clean stop releases them at once, so a takeover never waits for it.
CLUSTER = {"lease_ttl_s": 20, "renew_every_s": 0.2, "partitions": PARTITIONS, "poll_s": 0.1}
SLOW = {"typing_after_s": 60}  # a replica whose turns end before they show the signal

pytestmark = pytest.mark.timeout(120)


@pytest_asyncio.fixture
async def replicas(
    platform_daemon: daemons.PlatformDaemons, fake_slack: FakeSlack, tmp_path: Path
) -> AsyncIterator[Any]:
    """``a, b, dm = await replicas(agent_b=...)``: replicas a (marking at once) and b,
    HTTP events only, with the chat partitions split between them, and a DM channel id
    whose chat a runs."""
    section = {
        "bot_token": fake_slack.bot_token,
        "app_token": "",
        "signing_secret": fake_slack.signing_secret,
        "api_url": fake_slack.api_url,
        "allow_from": ["*"],
    }
    async with empty_schema() as url:

        async def start(agent_b: dict[str, Any] | None = None) -> tuple[Daemon, Daemon, str]:
            common: dict[str, Any] = {"store": {"url": url}, "cluster": CLUSTER}
            a = await platform_daemon({"slack": section}, data_dir=tmp_path / "a", **common)
            b_agent = {"agent": agent_b} if agent_b else {}
            b = await platform_daemon(
                {"slack": section}, data_dir=tmp_path / "b", **common, **b_agent
            )
            half = PARTITIONS // 2
            await until(lambda: len(a.cluster.held()) == half == len(b.cluster.held()))
            return a, b, dm_run_by(a)

        yield start
        await platform_daemon.stop_all()  # before the schema goes


def runs(daemon: Daemon, channel: str) -> bool:
    """Whether ``daemon`` holds the partition of the DM ``channel``."""
    key = ChatKey("slack", channel, None)
    return lease_name(partition_of(key, PARTITIONS)) in daemon.cluster.held()


def dm_run_by(daemon: Daemon) -> str:
    """A DM channel id whose chat ``daemon`` runs."""
    return next(c for c in (f"D{n:03d}" for n in range(100)) if runs(daemon, c))


async def say(fake_slack: FakeSlack, to: Daemon, channel: str, text: str) -> dict[str, Any]:
    """A user's DM, posted as a signed HTTP event to the replica ``to``."""
    assert to.web is not None
    event = fake_slack.message(text, channel=channel)
    body = fake_slack.body(event)
    status, _ = await post_signed(to.web.url + "/slack/events", body, fake_slack.signing_secret)
    assert status == 200
    return event


async def test_the_replica_running_a_turn_marks_a_message_the_other_received(
    replicas: Any, fake_slack: FakeSlack, fake_llm: Any
) -> None:
    _, b, channel = await replicas()  # a runs the chat
    release = fake_llm.held_answer("done")
    event = await say(fake_slack, b, channel, "a slow one")  # b journals it; a runs it
    await fake_slack.wait_until(lambda: fake_slack.reactions)
    assert fake_slack.reactions == {(channel, event["ts"], "eyes")}
    release.set()
    [post] = await fake_slack.wait_posts(1, channel=channel)
    assert post["text"] == "done"
    await fake_slack.wait_until(lambda: not fake_slack.reactions)
    await until_no_state_key(b, "eyes")


async def test_a_replica_taking_a_chat_over_takes_off_the_eyes_its_owner_left(
    replicas: Any, fake_slack: FakeSlack, fake_llm: Any
) -> None:
    a, b, channel = await replicas(agent_b=SLOW)
    release = fake_llm.held_answer("never sent")
    event = await say(fake_slack, a, channel, "cut off")
    await fake_slack.wait_until(lambda: fake_slack.reactions)
    await a.stop(timeout=2)  # mid-turn: b takes the chat over and runs the message again
    [post] = await fake_slack.wait_posts(1, channel=channel)
    assert post["text"] == "echo: cut off"
    await fake_slack.wait_until(lambda: not fake_slack.reactions)
    assert [c.params["timestamp"] for c in fake_slack.calls_to("reactions.add")] == [event["ts"]]
    await until_no_state_key(b, "eyes")
    release.set()


async def test_a_stop_the_other_replica_received_ends_the_turn_where_it_runs(
    replicas: Any, fake_slack: FakeSlack, fake_llm: Any
) -> None:
    a, b, channel = await replicas()
    release = fake_llm.held_answer("never sent")
    await say(fake_slack, a, channel, "a slow one")
    await fake_llm.wait_requests(1)  # a's turn is waiting on the model
    await say(fake_slack, b, channel, "/stop")  # b journals it; a, running the chat, stops
    [post] = await fake_slack.wait_posts(1, channel=channel)
    assert post["text"] == STOPPED
    release.set()
