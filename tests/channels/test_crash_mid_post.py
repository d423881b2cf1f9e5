"""The real process killed between a post reaching the platform and its sent mark.

The fake platform SIGKILLs `bot run` from its handler of the post, after storing it and
before answering, so the daemon never learns the post landed; the next start must not
show the answer twice. Slack looks the post up by the delivery key in its metadata;
Discord looks it up in the channel's history (the nonce is not kept there, and Discord
honours it for a few minutes only: the fake honours it for none here, as for a restart
after that window).
"""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import discord_api, slack_api
from tests.fakes.discord_api import FakeDiscord
from tests.fakes.llm_server import FakeLLM
from tests.fakes.process import BotProcess, bot_env
from tests.fakes.slack_api import FakeSlack
from tests.fakes.waiting import PROCESS_S, PROCESS_TEST_S

# Subprocesses and real time; still run by make test. Two `bot run` each import litellm
# before their first answer (7-9 s each on this 2-core machine under load): past 60 s
# when the machine is busy.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(PROCESS_TEST_S)]

fake_slack = slack_api.fake_slack
fake_discord = discord_api.fake_discord
WAIT_S = PROCESS_S  # generous: a first turn on a loaded machine (conditions, not sleeps)


class Platform:
    """What the scenario needs of a fake: connected, say something, what was posted."""

    def __init__(
        self,
        fake: Any,
        connected: Callable[[int], Awaitable[None]],
        say: Callable[[str], Awaitable[object]],
        posted: Callable[[], list[str]],
    ) -> None:
        self.fake, self.connected, self.say, self.posted = fake, connected, say, posted


def _env(tmp_path: Path, llm: FakeLLM, platform: str, **section: str) -> dict[str, str]:
    """`bot run`'s environment with one platform configured, open to everyone."""
    prefix = f"BOT_CHANNELS__{platform.upper()}__"
    values = {f"{prefix}{k.upper()}": v for k, v in {**section, "allow_from": '["*"]'}.items()}
    return bot_env(tmp_path / "data", llm, **values)


async def _crash_mid_post(env: dict[str, str], cwd: Path, platform: Platform) -> BotProcess:
    """The first answer kills the process as it lands; a restart, then a barrier answer
    in the same chat (queued after any repeat). Returns the second process, stopped."""
    first = await BotProcess.start(env, cwd)
    await platform.connected(1)

    def kill(_post: dict[str, Any]) -> None:
        if first.proc.returncode is None:
            first.proc.send_signal(signal.SIGKILL)

    platform.fake.after_post = kill
    await platform.say("hi there")
    await platform.fake.wait_until(lambda: bool(platform.posted()), WAIT_S)
    platform.fake.after_post = None
    assert await first.stop(signal.SIGKILL) == -signal.SIGKILL, first.log
    second = await BotProcess.start(env, cwd)
    try:
        await platform.connected(2)
        await platform.say("barrier")
        await platform.fake.wait_until(lambda: "echo: barrier" in platform.posted(), WAIT_S)
    finally:
        assert await second.stop(signal.SIGTERM) == 0, second.log
    assert platform.posted() == ["echo: hi there", "echo: barrier"], second.log
    return second


async def test_slack_post_landed_before_a_crash_is_found_not_posted_again(
    tmp_path: Path, fake_llm: FakeLLM, fake_slack: FakeSlack
) -> None:
    env = _env(
        tmp_path,
        fake_llm,
        "slack",
        bot_token=fake_slack.bot_token,
        app_token=fake_slack.app_token,
        api_url=fake_slack.api_url,
    )

    async def connected(n: int) -> None:
        await fake_slack.wait_socket(opened=n, timeout=WAIT_S)

    async def say(text: str) -> None:
        await fake_slack.push(fake_slack.message(text))

    def posted() -> list[str]:
        return [p["text"] for p in fake_slack.posts()]

    second = await _crash_mid_post(env, tmp_path, Platform(fake_slack, connected, say, posted))
    assert "had arrived" in second.log, second.log


async def test_discord_post_landed_before_a_crash_is_found_not_posted_again(
    tmp_path: Path, fake_llm: FakeLLM, fake_discord: FakeDiscord
) -> None:
    fake_discord.nonce_window_s = 0.0  # the restart comes after Discord forgot the nonce
    env = _env(
        tmp_path,
        fake_llm,
        "discord",
        token=fake_discord.token,
        api_base=fake_discord.api_base,
        gateway_url=fake_discord.gateway_url,
    )

    async def connected(_n: int) -> None:
        await fake_discord.wait_session(timeout=WAIT_S)

    async def say(text: str) -> None:
        fake_discord.user_message(text)

    def posted() -> list[str]:
        return [str(m["content"]) for m in fake_discord.created]

    platform = Platform(fake_discord, connected, say, posted)
    second = await _crash_mid_post(env, tmp_path, platform)
    assert "had arrived" in second.log, second.log
    assert len(fake_discord.posts()) == 2  # found in the history: not even sent again
    assert fake_discord.calls_to("GET /channels/{channel_id}/messages")
